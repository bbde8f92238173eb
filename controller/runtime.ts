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
import { Reconciler } from './reconciler/reconciler.ts';
import { AppliedStore } from './reconciler/applied.ts';
import type { PlanEntry, SyncReport } from './reconciler/types.ts';
import { WriterLock } from './git/lock.ts';
import { gitMessage, GitRepo, isNonFastForward } from './git/repo.ts';
import { ControllerMetrics } from './metrics/metrics.ts';
import type { RunOutcome } from './metrics/runs.ts';
import { Notifications } from './notify/notifications.ts';
import { NetworkEgressPolicy } from './runs/engine/egress.ts';
import { DirectorySource } from './sources/directory.ts';
import { GitSource } from './sources/git.ts';
import { notingOwnWrites } from './sources/own-writes.ts';
import { openStore, type Store } from './store/db.ts';
import type { Applier, Clock, Manifest, ManifestSource, ManifestWriter } from './types.ts';
import { ManifestSubmitter } from './usecases/submit.ts';
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
import { auditRecorded } from './audit/reconcile.ts';
import { pruneAudit } from './audit/log.ts';

/** How often offboarded clients are checked for a passed retention (`client.purge_due`). */
const PURGE_DUE_CHECK_MS = 3_600_000;

/** Longest a git-mode batch waits for the rest of a burst of writes (see GitWriterOptions.gather). */
const GATHER_MS = 5;

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
 * The controller's parts wired together: store, schemas, reconciler, source and writer.
 * `bictl serve` builds one and hands it to the API; tests build one on temp folders.
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
  readonly locks = new KeyedMutex();
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
  readonly #shutdown: ShutdownHook[] = [];
  #stopped = false;
  /** API writes in flight: stop() lets them finish before the store closes. */
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(opts: RuntimeOptions) {
    this.config = opts.config;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger();
    this.#maintenance = opts.maintenanceScheduler ?? realScheduler;
    this.db = openStore(opts.config.dbPath);
    this.schemas = opts.schemas ?? new SchemaRegistry(undefined, { strict: opts.config.strictManifests });
    this.applied = new AppliedStore(this.db);
    this.clientSets = new ClientSetGenerator({ db: this.db, schemas: this.schemas, clock: this.clock });
    this.authz = new Authorizer({ db: this.db });
    this.search = new RegistrySearch({ db: this.db });
    this.secrets = new SecretStore({ db: this.db, secretKey: opts.config.secretKey, clock: this.clock });
    this.onShutdown(() => this.search.close());
    this.auth = new AuthService({ db: this.db, clock: this.clock, log: this.log, settings: { ...authSettingsOf(opts.config.auth), ...opts.auth } });
    this.onShutdown(() => this.auth.close());
    const git = opts.source ? undefined : this.#gitParts(opts);
    this.source =
      opts.source ??
      git?.source ??
      new DirectorySource({
        root: opts.config.manifestsDir,
        scheduler: opts.scheduler ?? realScheduler,
        onError: (err) => this.log.error({ err: err.message }, 'watcher error'),
      });
    this.gitSource = this.source instanceof GitSource ? this.source : undefined;
    this.writer =
      opts.writer ??
      git?.writer ??
      (this.source instanceof DirectorySource
        ? notingOwnWrites(new DirectoryWriter({ root: this.source.root }), this.source)
        : new DirectoryWriter({ root: this.source.root }));
    const source = this.source;
    this.reconciler = new Reconciler({
      db: this.db,
      schemas: this.schemas,
      appliers: opts.appliers ?? defaultAppliers({ scheduleMinIntervalMs: opts.config.scheduleMinIntervalMs, retentionMs: opts.config.retentionMs }),
      generators: [this.clientSets],
      read: (path) => source.read(path),
      clock: this.clock,
      scheduler: opts.scheduler,
      random: opts.random,
      pruneWindowMs: opts.pruneWindowMs,
      observeRecord: ((audit) => (result, facts, previous) => {
        audit(result, facts, previous);
        this.applied.observe(result, facts, this.clock());
      })(auditRecorded(this.db, this.clock)),
    });
    source.connect(this.reconciler);
    this.submitter = new ManifestSubmitter({ writer: this.writer, reconciler: this.reconciler, track: (fn) => this.track(fn) });
    this.notifications = new Notifications({
      db: this.db,
      status: this.reconciler.status.list(),
      clock: this.clock,
      scheduler: opts.scheduler,
      random: opts.random,
      log: this.log,
      // The pipelines' egress rules without their allow-list (BI_PIPELINE_EGRESS is for pipelines).
      egress: new NetworkEgressPolicy({ listen: { host: opts.config.host, port: opts.config.port } }),
      onAttempt: (d, result) => this.metrics.notifications.inc({ notifier: d.notifier, event: d.event, result }),
    });
    this.metrics = new ControllerMetrics({
      db: this.db,
      kinds: this.reconciler.kinds,
      queue: () => this.reconciler.queueStats,
      notificationDepth: () => this.notifications.depth,
      purgesPending: () => this.purges.pendingCount(),
      clientSetTenants: () => clientSetTenantCounts(new ClientSetReads({ store: this.clientSets.store, status: this.reconciler.status })),
    });
    // Registered first, so it runs last at shutdown: deliveries in flight finish before the store closes.
    // A receiver that hangs delays the stop by 2 s at most (its attempt's own timeout is 10 s).
    this.onShutdown(async () => {
      await Promise.race([this.notifications.idle(), new Promise<void>((resolve) => setTimeout(resolve, 2000).unref())]);
      this.notifications.stop();
    });
    this.reconciler.on('event', (e) => {
      // Observers never fail a reconcile: the Recorder emits inside the loop.
      try {
        this.metrics.observeReconcile(e);
        this.notifications.onReconcileEvent(e);
        this.holds.onEvent(e);
      } catch (err) {
        this.log.error({ err: (err as Error).message, key: e.key }, 'observing an event failed');
      }
      if (e.type === 'step') this.log.debug({ key: e.key, step: e.step }, 'step');
      else if (e.type === 'prune-blocked' || e.type === 'rollout-paused') this.log.warn({ key: e.key, message: e.message }, e.type);
      else if (e.phase === 'Failed' || e.phase === 'Invalid') this.log.warn({ key: e.key, phase: e.phase, reason: e.reason, message: e.message }, 'phase');
      else this.log.info({ key: e.key, phase: e.phase }, 'reconciled');
    });
    this.runs = new PipelineRuns({
      db: this.db,
      config: opts.config,
      secrets: this.secrets,
      engine: opts.engine,
      clock: this.clock,
      scheduler: opts.scheduler ?? realScheduler,
      log: this.log,
      pipelineEvents: this.reconciler,
      retentionScheduler: this.#maintenance,
      onFinished: (run) => this.runFinished(run),
    });
    if (this.runs.dispatcher instanceof QueueRunDispatcher) registerWorkerMetrics(this.metrics.registry, this.runs.dispatcher);
    this.purges = new ClientPurge({ runtime: this });
    this.holds = new ClientHoldsObserver({ runtime: this });
  }

  /** Git mode: the working clone, its one writer lock, the polling source and the committing writer. */
  #gitParts(opts: RuntimeOptions): { source: GitSource; writer: GitWriter } | undefined {
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
        this.metrics.observeGit(op, seconds, error);
        // A push the remote refused because it moved is the normal race, resolved by rebasing.
        if (error === undefined || !isNonFastForward(error)) this.notifications.onGit(op, git.branch, error === undefined ? undefined : gitMessage(error));
      },
    });
    const lock = new WriterLock();
    const source = new GitSource({
      repo,
      lock,
      db: this.db,
      path: git.path,
      intervalMs: git.intervalMs,
      scheduler,
      clock: this.clock,
      log: this.log,
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
      log: this.log,
      // Real time on purpose: a few ms for a burst's stragglers to join its batch, ended early by them.
      gather: { maxMs: GATHER_MS, wait: (ms) => new Promise((resolve) => setTimeout(resolve, ms)) },
      onRemoteMoved: () => source.requestSync(),
    });
    return { source, writer };
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

  /** A pipeline run finished: the run lifecycle calls this once per run (metrics and notifications). */
  runFinished(run: RunOutcome): void {
    this.metrics.observe(run);
    this.notifications.onRun(run);
  }

  onShutdown(hook: ShutdownHook): void {
    this.#shutdown.push(hook);
  }

  /** Runs `fn` as work in flight: refused once stopping, awaited by stop() before the store closes. */
  track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#stopped) return Promise.reject(new UnavailableError('the controller is shutting down'));
    const p = fn();
    this.#inFlight.add(p);
    const done = () => this.#inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    // Answered writes' local work (a checkout) finishes first: the source's stop kills git processes.
    await this.writer.settle?.();
    await this.source.stop();
    await Promise.allSettled([...this.#inFlight]);
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
