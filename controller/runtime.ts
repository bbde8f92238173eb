import { kindOwnership } from './kinds/ownership.ts';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { AuthService, authSettingsOf, type AuthSettings } from './auth/service.ts';
import { realScheduler, systemClock, type Scheduler } from './clock.ts';
import type { Config } from './config.ts';
import { ClientSetGenerator } from './kinds/clientset/generator.ts';
import { ClientSetReads, clientSetTenantCounts } from './kinds/clientset/reads.ts';
import { previewClientSet } from './kinds/clientset/preview.ts';
import type { ClientSetSpec } from './kinds/clientset/types.ts';
import { parseManifest } from './manifest/loader.ts';
import { defaultAppliers } from './kinds/index.ts';
import { silentLogger, type Logger } from './log.ts';
import { SchemaRegistry } from './manifest/validator.ts';
import { KeyedMutex } from './mutex.ts';
import { applierKinds, Reconciler } from './reconciler/reconciler.ts';
import { StatusStore } from './reconciler/status.ts';
import { AppliedStore } from './reconciler/applied.ts';
import type { PlanEntry, SyncReport } from './reconciler/types.ts';
import { WriterLock } from './git/lock.ts';
import { gitMessage, GitRepo, isNonFastForward } from './git/repo.ts';
import { ControllerMetrics } from './metrics/metrics.ts';
import type { RunOutcome } from './runs/types.ts';
import { Notifications } from './notify/notifications.ts';
import { NetworkEgressPolicy } from './runs/engine/egress.ts';
import { DirectorySource } from './sources/directory.ts';
import { GitSource } from './sources/git.ts';
import { notingOwnWrites } from './sources/own-writes.ts';
import { openStore, type Store } from './store/db.ts';
import type { Applier, Clock, Manifest, ManifestSource, ManifestWriter } from './types.ts';
import { ManifestSubmitter } from './writers/submit.ts';
import { Authorizer } from './authz/index.ts';
import { RegistrySearch } from './kinds/client/search.ts';
import { DirectoryWriter } from './writers/directory.ts';
import { GitWriter } from './writers/git.ts';
import { UnavailableError } from './errors.ts';
import { PipelineRuns } from './runs/runs.ts';
import { QueueRunDispatcher } from './runs/queue/dispatcher.ts';
import { registerWorkerMetrics } from './runs/queue/metrics.ts';
import { SecretStore } from './secrets/store.ts';
import type { PipelineEngine } from './runs/types.ts';
import { ClientPurge } from './usecases/purge-client.ts';
import { ClientHoldsObserver } from './usecases/client-holds.ts';
import type { LifecyclePorts } from './usecases/ports.ts';
import { auditRecorded } from './audit/reconcile.ts';
import { pruneAudit } from './audit/log.ts';

/** How often offboarded clients are checked for a passed retention (`client.purge_due`). */
const PURGE_DUE_CHECK_MS = 3_600_000;

/**
 * Longest a git-mode batch waits for the rest of a burst of writes (see GitWriterOptions.gather):
 * long enough for the callers a push answered to come back (their reconcile and a round trip,
 * 30–80 ms under load for 10–40 writes), short beside a push (docs/benchmarks.md, third pass).
 */
const GATHER_MS = 50;

export interface RuntimeOptions {
  config: Config;
  log?: Logger;
  clock?: Clock;
  scheduler?: Scheduler;
  random?: () => number;
  appliers?: Applier[];
  /** Replace the folder watcher / file writer (git mode, tests). */
  source?: ManifestSource;
  writer?: ManifestWriter;
  /** Waits between git push attempts (tests resolve at once). */
  sleep?: (ms: number) => Promise<void>;
  /** Authentication settings over those of the configuration (tests: a cheap password hash). */
  auth?: Partial<AuthSettings>;
  /** Runs pipelines (tests inject a fake). */
  engine?: PipelineEngine;
  /**
   * The hourly housekeeping timers (run retention, the purge-due check, audit retention): real and
   * unref'd by default, apart from `scheduler`, so tests that count and drive its timers see none of them.
   */
  maintenanceScheduler?: Scheduler;
  /** The compiled schemas (compiling them costs ~1 s: tests share one registry per file). */
  schemas?: SchemaRegistry;
  /** The mass-prune guard's window for a folder's removals (default 10 s; tests with real time shorten it). */
  pruneWindowMs?: number;
}

/** Where git mode keeps its working clone: one folder per repository URL under the data folder. */
export function cloneDir(dataDir: string, url: string): string {
  return join(dataDir, 'git', createHash('sha256').update(url).digest('hex').slice(0, 16));
}

/** Hooks other parts register to run at shutdown (flush `lastUsedAt`, close git). */
export type ShutdownHook = () => Promise<void> | void;

/**
 * Builds a runtime, each part after what it needs: store and schemas; the services on the store;
 * metrics and notifications (before the git source, which reports to both); the source and
 * writer; the reconciler reading that source; the write path, the runs and the lifecycle; then
 * what observes them. No part is handed a closure over a part not built yet.
 */
export function createRuntime(opts: RuntimeOptions): Runtime {
  const config = opts.config;
  const clock = opts.clock ?? systemClock;
  const log = opts.log ?? silentLogger();
  const maintenance = opts.maintenanceScheduler ?? realScheduler;
  const shutdown: ShutdownHook[] = [];
  const inFlight = new WorkInFlight();
  const locks = new KeyedMutex();
  const db = openStore(config.dbPath);
  const schemas = opts.schemas ?? new SchemaRegistry(undefined, { strict: config.strictManifests });
  const applied = new AppliedStore(db);
  const clientSets = new ClientSetGenerator({ db, schemas, clock });
  const owners = kindOwnership(db);
  const authz = new Authorizer({ owners });
  const search = new RegistrySearch({ db });
  const secrets = new SecretStore({ db, secretKey: config.secretKey, clock });
  shutdown.push(() => search.close());
  const auth = new AuthService({ db, clock, log, settings: { ...authSettingsOf(config.auth), ...opts.auth } });
  shutdown.push(() => auth.close());
  const appliers = opts.appliers ?? defaultAppliers({ scheduleMinIntervalMs: config.scheduleMinIntervalMs, retentionMs: config.retentionMs });
  const metrics = new ControllerMetrics({ db, kinds: applierKinds(appliers) });
  const notifications = new Notifications({
    db,
    status: new StatusStore(db).list(),
    clock,
    scheduler: opts.scheduler,
    random: opts.random,
    log,
    // The pipelines' egress rules without their allow-list (BI_PIPELINE_EGRESS is for pipelines).
    egress: new NetworkEgressPolicy({ listen: { host: config.host, port: config.port } }),
    onAttempt: (d, result) => metrics.notifications.inc({ notifier: d.notifier, event: d.event, result }),
  });
  // Registered before the rest, so it runs late at shutdown: deliveries in flight finish before the store closes.
  // A receiver that hangs delays the stop by 2 s at most (its attempt's own timeout is 10 s).
  shutdown.push(async () => {
    await Promise.race([notifications.idle(), new Promise<void>((resolve) => setTimeout(resolve, 2000).unref())]);
    notifications.stop();
  });
  const git = opts.source ? undefined : gitParts(opts, { db, clock, log, metrics, notifications });
  const source =
    opts.source ??
    git?.source ??
    new DirectorySource({
      root: config.manifestsDir,
      scheduler: opts.scheduler ?? realScheduler,
      onError: (err) => log.error({ err: err.message }, 'watcher error'),
    });
  const writer =
    opts.writer ??
    git?.writer ??
    (source instanceof DirectorySource ? notingOwnWrites(new DirectoryWriter({ root: source.root }), source) : new DirectoryWriter({ root: source.root }));
  const reconciler = new Reconciler({
    db,
    schemas,
    appliers,
    generators: [clientSets],
    read: (path) => source.read(path),
    clock,
    scheduler: opts.scheduler,
    random: opts.random,
    pruneWindowMs: opts.pruneWindowMs,
    observeRecord: ((audit) => (result, facts, previous) => {
      audit(result, facts, previous);
      applied.observe(result, facts, clock());
    })(auditRecorded(db, clock, owners.manifest)),
  });
  source.connect(reconciler);
  const submitter = new ManifestSubmitter({ writer, reconciler, track: (fn) => inFlight.track(fn) });
  const runs = new PipelineRuns({
    db,
    config,
    secrets,
    engine: opts.engine,
    clock,
    scheduler: opts.scheduler ?? realScheduler,
    log,
    pipelineEvents: reconciler,
    retentionScheduler: maintenance,
    onFinished: (run) => reportRun(run, metrics, notifications),
  });
  const lifecycle: LifecyclePorts = { db, clock, log, config, locks, auth, runs, reconciler, source, submitter, notifications, applied };
  const purges = new ClientPurge({ runtime: lifecycle });
  const holds = new ClientHoldsObserver({ runtime: lifecycle });
  metrics.watch({
    queue: () => reconciler.queueStats,
    notificationDepth: () => notifications.depth,
    purgesPending: () => purges.pendingCount(),
    clientSetTenants: () => clientSetTenantCounts(new ClientSetReads({ store: clientSets.store, status: reconciler.status })),
  });
  if (runs.dispatcher instanceof QueueRunDispatcher) registerWorkerMetrics(metrics.registry, runs.dispatcher);
  reconciler.on('event', (e) => {
    // Observers never fail a reconcile: the Recorder emits inside the loop.
    try {
      metrics.observeReconcile(e);
      notifications.onReconcileEvent(e);
      holds.onEvent(e);
    } catch (err) {
      log.error({ err: (err as Error).message, key: e.key }, 'observing an event failed');
    }
    if (e.type === 'step') log.debug({ key: e.key, step: e.step }, 'step');
    else if (e.type === 'prune-blocked' || e.type === 'rollout-paused') log.warn({ key: e.key, message: e.message }, e.type);
    else if (e.phase === 'Failed' || e.phase === 'Invalid') log.warn({ key: e.key, phase: e.phase, reason: e.reason, message: e.message }, 'phase');
    else log.info({ key: e.key, phase: e.phase }, 'reconciled');
  });
  return new Runtime({
    config,
    db,
    schemas,
    applied,
    reconciler,
    clientSets,
    source,
    writer,
    submitter,
    clock,
    log,
    locks,
    runs,
    metrics,
    notifications,
    auth,
    authz,
    search,
    secrets,
    purges,
    holds,
    maintenance,
    inFlight,
    shutdown,
  });
}

/** A finished pipeline run, once: counted in the metrics and notified. */
function reportRun(run: RunOutcome, metrics: ControllerMetrics, notifications: Notifications): void {
  metrics.observe(run);
  notifications.onRun(run);
}

/** Git mode: the working clone, its one writer lock, the polling source and the committing writer. */
function gitParts(
  opts: RuntimeOptions,
  deps: { db: Store; clock: Clock; log: Logger; metrics: ControllerMetrics; notifications: Notifications },
): { source: GitSource; writer: GitWriter } | undefined {
  const git = opts.config.git;
  if (!git) return undefined;
  const scheduler = opts.scheduler ?? realScheduler;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((resolve) => scheduler(resolve, ms)));
  const repo = new GitRepo({
    dir: cloneDir(opts.config.dataDir, git.url),
    url: git.url,
    branch: git.branch,
    committer: { name: git.authorName, email: git.authorEmail },
    observe: (op, seconds, error) => {
      deps.metrics.observeGit(op, seconds, error);
      // A push the remote refused because it moved is the normal race, resolved by rebasing.
      if (error === undefined || !isNonFastForward(error)) deps.notifications.onGit(op, git.branch, error === undefined ? undefined : gitMessage(error));
    },
  });
  const lock = new WriterLock();
  const source = new GitSource({
    repo,
    lock,
    db: deps.db,
    path: git.path,
    intervalMs: git.intervalMs,
    scheduler,
    clock: deps.clock,
    log: deps.log,
    random: opts.random,
    sleep,
  });
  const writer = new GitWriter({
    repo,
    lock,
    root: source.root,
    path: git.path,
    sleep,
    random: opts.random,
    log: deps.log,
    // Real time on purpose: a few ms for a burst's stragglers to join its batch, ended early by them.
    gather: { maxMs: GATHER_MS, wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
    onRemoteMoved: () => source.requestSync(),
  });
  return { source, writer };
}

/** Every part of a runtime, built by createRuntime() in dependency order. */
export interface RuntimeParts
  extends Pick<
    Runtime,
    'config' | 'db' | 'schemas' | 'reconciler' | 'applied' | 'clientSets' | 'source' | 'writer' | 'submitter' | 'clock' | 'log' | 'locks' | 'runs' | 'metrics' | 'notifications' | 'auth' | 'authz' | 'search' | 'secrets' | 'purges' | 'holds'
  > {
  readonly maintenance: Scheduler;
  readonly inFlight: WorkInFlight;
  readonly shutdown: ShutdownHook[];
}

/**
 * API writes in flight: refused once stopping, awaited by stop() before the store closes. Made
 * first, so the write path can track its work before the runtime that owns it exists.
 */
export class WorkInFlight {
  readonly #pending = new Set<Promise<unknown>>();
  #stopped = false;

  track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#stopped) return Promise.reject(new UnavailableError('the controller is shutting down'));
    const p = fn();
    this.#pending.add(p);
    const done = () => this.#pending.delete(p);
    p.then(done, done);
    return p;
  }

  /** Refuses new work from now on; answers whether it was already stopped. */
  stop(): boolean {
    const was = this.#stopped;
    this.#stopped = true;
    return was;
  }

  /** Settles once the work in flight now has. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#pending]);
  }
}

/**
 * The controller's parts wired together: store, schemas, reconciler, source and writer.
 * `bictl serve` builds one (createRuntime) and hands it to the API; tests build one on temp folders.
 */
export class Runtime {
  readonly config: Config;
  readonly db: Store;
  readonly schemas: SchemaRegistry;
  readonly reconciler: Reconciler;
  /** Every manifest as the reconciler applied it (the last versions per key): applied state, diffs, directory-mode history. */
  readonly applied: AppliedStore;
  /** Kind ClientSet: renders sets into generated objects and keeps their rollouts. */
  readonly clientSets: ClientSetGenerator;
  readonly source: ManifestSource;
  readonly writer: ManifestWriter;
  /** The API's one write path (write, reconcile, withdraw on failure). */
  readonly submitter: ManifestSubmitter;
  /** The git source in git mode (BI_GIT_URL set), for sync now, webhooks and rollback. */
  readonly gitSource: GitSource | undefined;
  readonly clock: Clock;
  readonly log: Logger;
  /** Serializes API writes per object (`Client/ACME`). */
  readonly locks: KeyedMutex;
  /** Pipeline runs: records, dispatcher, schedules (started by start(), closed by stop()). */
  readonly runs: PipelineRuns;
  /** The `bi_` metrics of `GET /metrics`. */
  readonly metrics: ControllerMetrics;
  /** Notifier manifests' dispatcher and delivery queue. */
  readonly notifications: Notifications;
  /** Users, sessions and API keys, with the key cache and limiters every route shares; flushed at shutdown. */
  readonly auth: AuthService;
  /** The one authorization module: "may principal P do action A on object O". */
  readonly authz: Authorizer;
  /** Registry search: pattern matching in worker threads with a hard time limit. */
  readonly search: RegistrySearch;
  /** The encrypted secrets (`secret:` passwords): one store for the settings, the console's tests and the runs. */
  readonly secrets: SecretStore;
  /** Purges of offboarded clients (a purge a crash interrupted is finished at start). */
  readonly purges: ClientPurge;
  /** Suspended and offboarded clients: their runs stopped, their transitions notified. */
  readonly holds: ClientHoldsObserver;
  readonly #maintenance: Scheduler;
  #purgeDueTimer: (() => void) | undefined;
  readonly #shutdown: ShutdownHook[];
  #stopped = false;
  /** API writes in flight: stop() lets them finish before the store closes. */
  readonly #inFlight: WorkInFlight;

  /** Use createRuntime(): it builds the parts in dependency order. */
  constructor(parts: RuntimeParts) {
    this.config = parts.config;
    this.db = parts.db;
    this.schemas = parts.schemas;
    this.reconciler = parts.reconciler;
    this.applied = parts.applied;
    this.clientSets = parts.clientSets;
    this.source = parts.source;
    this.writer = parts.writer;
    this.submitter = parts.submitter;
    this.gitSource = parts.source instanceof GitSource ? parts.source : undefined;
    this.clock = parts.clock;
    this.log = parts.log;
    this.locks = parts.locks;
    this.runs = parts.runs;
    this.metrics = parts.metrics;
    this.notifications = parts.notifications;
    this.auth = parts.auth;
    this.authz = parts.authz;
    this.search = parts.search;
    this.secrets = parts.secrets;
    this.purges = parts.purges;
    this.holds = parts.holds;
    this.#maintenance = parts.maintenance;
    this.#inFlight = parts.inFlight;
    this.#shutdown = parts.shutdown;
  }

  /** Starts the source: its first full sync, then watching (or polling). */
  async start(): Promise<void> {
    // Runs first: interrupted runs are failed and stored schedules fire even while a git remote is down.
    await this.runs.start();
    await this.source.start();
    await this.purges.resumePending();
    this.onShutdown(() => this.#purgeDueTimer?.());
    this.#watchPurgeDue();
  }

  /** `client.purge_due` for offboarded clients past their retention: now, then every hour. */
  #watchPurgeDue(): void {
    if (this.#stopped) return;
    try {
      this.holds.checkDue();
      const keep = this.config.auditRetentionMs;
      if (keep !== undefined) pruneAudit(this.db, new Date(this.clock().getTime() - keep).toISOString(), this.clock);
    } catch (err) {
      this.log.error({ err: (err as Error).message }, 'purge-due check or audit retention failed');
    }
    this.#purgeDueTimer = this.#maintenance(() => this.#watchPurgeDue(), PURGE_DUE_CHECK_MS);
  }

  /** Sync now (API, bictl sync): the source delivers everything it has; the same call in every mode. */
  syncNow(opts: { allowMassPrune?: boolean } = {}): Promise<SyncReport> {
    return this.track(() => this.source.syncNow(opts));
  }

  /** What applying a ClientSet would do per tenant, through the reconciler's dry run (nothing written). */
  previewClientSet(manifest: Manifest<ClientSetSpec>): ReturnType<typeof previewClientSet> {
    return previewClientSet(manifest, {
      store: this.clientSets.store,
      schemas: this.schemas,
      read: (p) => this.source.read(p),
      fileOf: (key) => this.reconciler.fileOf(key),
      dryRun: (objects) => this.reconciler.dryRun(objects),
    });
  }

  /** What a sync would change (bictl diff), changing nothing. */
  async plan(): Promise<PlanEntry[]> {
    const plan = await this.reconciler.plan(await this.source.snapshot());
    // A ClientSet: one entry per tenant, from the preview (the reconciler's dry run).
    const tenants = plan.flatMap((entry) => {
      if (!entry.key.startsWith('ClientSet/') || entry.action === 'invalid' || !entry.path) return [];
      const file = this.source.read(entry.path);
      const parsed = file && 'bytes' in file ? parseManifest(entry.path, file.bytes, this.schemas) : undefined;
      if (!parsed?.ok) return [];
      const preview = this.previewClientSet(parsed.manifest as Manifest<ClientSetSpec>);
      return preview.tenants.map((x) => ({
        key: `${entry.key}#${x.input}`,
        path: entry.path,
        action: x.action,
        ...(x.problems ? { problems: x.problems.map((message) => ({ path: '', message })) } : {}),
      }));
    });
    return [...plan, ...tenants];
  }

  /** A pipeline run finished (metrics and notifications), as the run lifecycle reports each run once. */
  runFinished(run: RunOutcome): void {
    reportRun(run, this.metrics, this.notifications);
  }

  onShutdown(hook: ShutdownHook): void {
    this.#shutdown.push(hook);
  }

  /** Runs `fn` as work in flight: refused once stopping, awaited by stop() before the store closes. */
  track<T>(fn: () => Promise<T>): Promise<T> {
    return this.#inFlight.track(fn);
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    this.#inFlight.stop();
    // Answered writes' local work (a checkout) finishes first: the source's stop kills git processes.
    await this.writer.settle?.();
    await this.source.stop();
    await this.#inFlight.settled();
    this.reconciler.stop();
    await this.reconciler.idle();
    await this.runs.close();
    for (const hook of this.#shutdown.reverse()) {
      try {
        await hook();
      } catch (err) {
        this.log.error({ err: (err as Error).message }, 'shutdown hook failed');
      }
    }
    this.db.close();
  }
}
