import { EventEmitter } from 'node:events';
import type { Scheduler, Cancel } from '../../clock.ts';
import type { QueueConfig } from '../../config.ts';
import { ConflictError, NotFoundError } from '../../errors.ts';
import { readPipeline } from '../pipeline-view.ts';
import type { Logger } from '../../log.ts';
import type { SecretStore } from '../../secrets/store.ts';
import type { Store } from '../../store/db.ts';
import type { Clock } from '../../types.ts';
import { pipelineClient, pipelineConnections } from '../access.ts';
import { admitStart, ownerAlive, processOwner, type RunDispatcher } from '../dispatcher.ts';
import { nextFairRun } from '../fairness.ts';
import type { LogLine, RunStore, RunView } from '../store.ts';
import type { EngineResult, RejectedRow, RunTrigger, StepProgress } from '../types.ts';
import { connectionIds, jobConnections, RUN_TASK, type RunJob } from './job.ts';
import { type Heartbeat, WorkerRegistry } from './registry.ts';

/** Where jobs go: graphile-worker's queue in PostgreSQL (tests may inject another). */
export interface JobQueue {
  add(job: RunJob): Promise<void>;
  /** Drops the job of a run cancelled while queued (a job already taken is refused at claim). */
  remove(runId: string): Promise<void>;
  /** Which of these runs still have a job a worker may take or has just taken (locked, not yet claimed). */
  pending(runIds: readonly string[]): Promise<Set<string>>;
  close(): Promise<void>;
}

/** The graphile-worker queue: jobs keyed by runId, one attempt (an interrupted run is never retried). */
export class GraphileJobQueue implements JobQueue {
  readonly #queue: QueueConfig;
  #utils: Promise<import('graphile-worker').WorkerUtils> | undefined;

  constructor(queue: QueueConfig) {
    this.#queue = queue;
  }

  #get(): Promise<import('graphile-worker').WorkerUtils> {
    return (this.#utils ??= (async () => {
      const { makeWorkerUtils } = await import('graphile-worker');
      const utils = await makeWorkerUtils({ connectionString: this.#queue.url, schema: this.#queue.schema });
      await utils.migrate();
      return utils;
    })().catch((err: Error) => {
      this.#utils = undefined;
      throw err;
    }));
  }

  async add(job: RunJob): Promise<void> {
    await (await this.#get()).addJob(RUN_TASK, job, { jobKey: job.runId, maxAttempts: 1 });
  }

  async remove(runId: string): Promise<void> {
    const schema = `"${this.#queue.schema.replace(/"/g, '""')}"`;
    await (await this.#get()).withPgClient((client) => client.query(`SELECT ${schema}.remove_job($1)`, [runId]));
  }

  async pending(runIds: readonly string[]): Promise<Set<string>> {
    const schema = `"${this.#queue.schema.replace(/"/g, '""')}"`;
    const { rows } = await (await this.#get()).withPgClient((client) =>
      client.query<{ key: string }>(`SELECT key FROM ${schema}._private_jobs WHERE key = ANY($1::text[]) AND (attempts < max_attempts OR locked_at > now() - make_interval(secs => $2))`, [runIds, (2 * this.#queue.lostMs) / 1000]),
    );
    return new Set(rows.map((r) => r.key));
  }

  async close(): Promise<void> {
    const utils = this.#utils;
    this.#utils = undefined;
    if (utils) await (await utils.catch(() => undefined))?.release();
  }
}

export interface QueueRunDispatcherOptions {
  db: Store;
  store: RunStore;
  secrets: SecretStore;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  queue: QueueConfig;
  /** The controller's egress rules, sent with each job (its listening port is known once it listens). */
  egress: () => RunJob['egress'];
  jobs?: JobQueue;
  owner?: string;
}

/** Unowned pipelines count as one tenant of their own (docs/contract/design.md, "Runs on more than one machine"). */
const UNOWNED = '\u0000unowned';

interface ActiveRow {
  run_id: string;
  pipeline_id: string;
  status: 'queued' | 'running';
  queued_at: string;
  enqueued_at: string | null;
  worker: string | null;
  owner: string | null;
}

/** What a worker reports while a run goes (README "Runs on more than one machine"). */
export interface ProgressReport {
  steps?: StepProgress[];
  rejects?: RejectedRow[];
  logs?: LogLine[];
}

/**
 * Runs dispatched through a PostgreSQL job queue (graphile-worker) to `bictl worker` processes.
 * The controller stays the one writer of its store: runs are recorded here `queued`, admitted into
 * the queue as workers have free slots (round-robin across tenants, controller/runs/fairness.ts),
 * and the workers report claim, progress and outcome over HTTP (api/routes/workers.ts). A worker
 * that stops sending heartbeats is lost: its runs fail `interrupted`. Emits `progress` (runId) and
 * `finished` (RunView) like the in-process dispatcher.
 */
export class QueueRunDispatcher extends EventEmitter implements RunDispatcher {
  readonly #opts: QueueRunDispatcherOptions;
  readonly #jobs: JobQueue;
  readonly #owner: string;
  readonly workers: WorkerRegistry;
  #closing = false;
  #sweep: Cancel | undefined;
  #pumping: Promise<void> = Promise.resolve();
  #pumpAgain = false;
  #pumpQueued = false;

  constructor(opts: QueueRunDispatcherOptions) {
    super();
    this.#opts = opts;
    this.#jobs = opts.jobs ?? new GraphileJobQueue(opts.queue);
    this.#owner = opts.owner ?? processOwner();
    this.workers = new WorkerRegistry({ db: opts.db, clock: opts.clock, lostMs: opts.queue.lostMs });
  }

  get owner(): string {
    return this.#owner;
  }

  /** How often lost workers are looked for (and waiting runs admitted). */
  get sweepMs(): number {
    return Math.max(50, Math.min(5000, Math.floor(this.#opts.queue.lostMs / 6)));
  }

  /**
   * At start: runs an in-process controller left `running` and whose process is gone fail
   * `interrupted`; queued runs stay queued (same runId) and are admitted when workers have room;
   * runs on workers are left to the heartbeats. Starts the sweep.
   */
  recover(): string[] {
    const { db, log } = this.#opts;
    const rows = db.prepare("SELECT * FROM pipeline_runs WHERE status = 'running' AND worker IS NULL").all() as ActiveRow[];
    const failed: string[] = [];
    for (const r of rows) {
      if (ownerAlive(r.owner, this.#owner)) continue;
      this.#interrupt(r.run_id, 'interrupted: the controller stopped while the run was running');
      failed.push(r.run_id);
    }
    for (const runId of failed) log.warn({ runId }, 'run interrupted by a restart: marked failed');
    this.#arm();
    this.pump();
    return failed;
  }

  #arm(): void {
    if (this.#closing) return;
    this.#sweep = this.#opts.scheduler(() => {
      this.#sweep = undefined;
      try {
        this.sweep();
      } catch (err) {
        this.#opts.log.error({ err: (err as Error).message }, 'worker sweep failed');
      }
      this.#arm();
    }, this.sweepMs);
  }

  /** Lost workers' runs fail `interrupted`; waiting runs are admitted into freed slots. */
  sweep(): void {
    const lostMs = this.#opts.queue.lostMs;
    for (const name of this.workers.newlyLost()) {
      const rows = this.#opts.db.prepare("SELECT run_id FROM pipeline_runs WHERE status = 'running' AND worker = ?").all(name) as { run_id: string }[];
      this.#opts.log.warn({ worker: name, runs: rows.map((r) => r.run_id) }, 'worker lost: no heartbeat');
      for (const r of rows) this.#interrupt(r.run_id, `interrupted: worker ${name} was lost (no heartbeat for ${Math.round(lostMs / 1000)} s)`);
    }
    void this.#readmit().finally(() => this.pump());
  }

  /**
   * Queued runs admitted a while ago whose job is gone (the controller stopped between admitting
   * and adding it, or a worker failed the job before claiming it) wait for a slot again.
   */
  async #readmit(): Promise<void> {
    const before = new Date(this.#opts.clock().getTime() - 2 * this.sweepMs).toISOString();
    const rows = this.#opts.db.prepare("SELECT run_id FROM pipeline_runs WHERE status = 'queued' AND enqueued_at IS NOT NULL AND enqueued_at < ?").all(before) as { run_id: string }[];
    if (!rows.length) return;
    try {
      const pending = await this.#jobs.pending(rows.map((r) => r.run_id));
      const reset = this.#opts.db.prepare("UPDATE pipeline_runs SET enqueued_at = NULL WHERE run_id = ? AND status = 'queued'");
      for (const r of rows) if (!pending.has(r.run_id)) reset.run(r.run_id);
    } catch (err) {
      this.#opts.log.warn({ err: (err as Error).message }, 'queue not reachable to check admitted runs');
    }
  }

  #interrupt(runId: string, error: string): void {
    const run = this.#opts.store.get(runId);
    if (!run || (run.status !== 'queued' && run.status !== 'running')) return;
    this.#settle(this.#opts.store.finish(runId, { status: 'failed', rowsRead: run.rowsRead, rowsWritten: 0, rowsRejected: run.rowsRejected, error, steps: run.steps }));
  }

  async start(pipelineId: string, trigger: RunTrigger, actor: string | null): Promise<RunView> {
    if (this.#closing) throw new ConflictError('the controller is shutting down');
    const { db, store, clock, log } = this.#opts;
    const pipeline = readPipeline(db, pipelineId, clock());
    if (!pipeline) throw new NotFoundError(`Pipeline ${pipelineId} not found`);
    const steps: StepProgress[] = pipeline.steps.map((s) => ({ stepId: s.id, type: s.type, name: s.name, status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null }));
    const audit = admitStart(db, clock, pipelineId, trigger, actor);
    const run = store.create({ pipelineId, trigger, actor, owner: this.#owner, steps });
    audit('ok');
    log.info({ runId: run.runId, pipelineId, trigger }, 'run queued');
    this.pump();
    return run;
  }

  async cancel(runId: string): Promise<RunView> {
    const { store, log } = this.#opts;
    const run = store.get(runId);
    if (!run) throw new NotFoundError(`Run ${runId} not found`);
    if (run.status === 'queued' && store.cancelQueued(runId)) {
      this.#jobs.remove(runId).catch((err: Error) => log.warn({ runId, err: err.message }, 'queued job not removed; the worker is refused at claim'));
      const cancelled = store.get(runId) as RunView;
      log.info({ runId }, 'run cancelled while queued');
      this.#settle(cancelled);
      this.pump();
      return cancelled;
    }
    const now = store.get(runId) as RunView;
    if (now.status === 'queued' || now.status === 'running') {
      store.requestCancel(runId);
      log.info({ runId, worker: now.worker }, 'run cancel requested');
      return store.get(runId) as RunView;
    }
    throw new ConflictError(`Run ${runId} has already ended (${now.status})`);
  }

  /** Admits waiting runs into the queue while workers that are up have free slots (serialized). */
  pump(): void {
    if (this.#closing) return;
    if (this.#pumpQueued) {
      this.#pumpAgain = true;
      return;
    }
    this.#pumpQueued = true;
    this.#pumping = this.#pumping
      .then(async () => {
        do {
          this.#pumpAgain = false;
          await this.#admit();
        } while (this.#pumpAgain && !this.#closing);
      })
      .catch((err: Error) => this.#opts.log.error({ err: err.message }, 'admitting runs into the queue failed'))
      .finally(() => {
        this.#pumpQueued = false;
      });
  }

  /** Resolves when the admissions asked so far are done (tests, bench). */
  async settled(): Promise<void> {
    while (this.#pumpQueued) await this.#pumping;
  }

  /** Each tenant's last admission (a sequence number): the round-robin turn of runs/fairness.ts. */
  readonly #lastAdmitted = new Map<string, number>();
  #admissions = 0;

  async #admit(): Promise<void> {
    const { db, clock, log } = this.#opts;
    const capacity = this.workers.capacity();
    const active = db.prepare("SELECT run_id, pipeline_id, status, queued_at, enqueued_at, worker, owner FROM pipeline_runs WHERE status IN ('queued','running')").all() as ActiveRow[];
    const tenants = new Map<string, string>();
    const tenantOf = (pipelineId: string) => {
      let t = tenants.get(pipelineId);
      if (t === undefined) tenants.set(pipelineId, (t = pipelineClient(db, pipelineId) ?? UNOWNED));
      return t;
    };
    let admitted = 0;
    const activeByTenant = new Map<string, number>();
    const waiting: { runId: string; tenant: string; queuedAt: number; pipelineId: string }[] = [];
    // Fairness counts each tenant's queued and running runs (docs/contract/design.md): the tenant with the fewest goes first.
    for (const r of active) {
      const tenant = tenantOf(r.pipeline_id);
      activeByTenant.set(tenant, (activeByTenant.get(tenant) ?? 0) + 1);
      if (r.status === 'running' || r.enqueued_at) admitted++;
      else waiting.push({ runId: r.run_id, tenant, queuedAt: Date.parse(r.queued_at), pipelineId: r.pipeline_id });
    }
    while (admitted < capacity && waiting.length && !this.#closing) {
      const next = nextFairRun(waiting, { active: activeByTenant, lastStarted: this.#lastAdmitted });
      if (!next) break;
      waiting.splice(waiting.indexOf(next), 1);
      const at = clock().toISOString();
      if (db.prepare("UPDATE pipeline_runs SET enqueued_at = ? WHERE run_id = ? AND status = 'queued' AND enqueued_at IS NULL").run(at, next.runId).changes !== 1) continue;
      const job = this.#job(next.runId, next.pipelineId);
      if (!job) continue;
      try {
        await this.#jobs.add(job);
      } catch (err) {
        db.prepare('UPDATE pipeline_runs SET enqueued_at = NULL WHERE run_id = ?').run(next.runId);
        log.error({ runId: next.runId, err: (err as Error).message }, 'run not enqueued: the queue is unreachable; retried on the next sweep');
        return;
      }
      admitted++;
      this.#lastAdmitted.set(next.tenant, ++this.#admissions);
      log.info({ runId: next.runId, pipelineId: next.pipelineId }, 'run enqueued');
    }
  }

  /** The job of a run: its pipeline's spec as it is now, connections resolved without plaintext. */
  #job(runId: string, pipelineId: string): RunJob | undefined {
    const { db, clock, secrets } = this.#opts;
    const pipeline = readPipeline(db, pipelineId, clock());
    if (!pipeline) {
      const run = this.#opts.store.get(runId) as RunView;
      this.#settle(this.#opts.store.finish(runId, { status: 'failed', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error: `pipeline ${pipelineId} no longer exists`, steps: run.steps }));
      return undefined;
    }
    const spec: RunJob['spec'] = {
      source: pipeline.source,
      destination: pipeline.destination,
      steps: pipeline.steps.map((s) => ({ id: s.id, type: s.type, name: s.name, config: s.config })),
    };
    return { runId, pipelineId, spec, connections: jobConnections({ db, secrets, allowed: pipelineConnections(db, pipelineId) ?? [], ids: connectionIds(spec) }), egress: this.#opts.egress() };
  }

  // ---- the workers' reports (api/routes/workers.ts) ----

  heartbeat(h: Heartbeat): void {
    this.workers.heartbeat(h);
    this.pump();
  }

  /** The worker took the run's job: queued → running on it. False when it is no longer queued. */
  claim(runId: string, worker: string): boolean {
    const at = this.#opts.clock().toISOString();
    const ok =
      this.#opts.db
        .prepare("UPDATE pipeline_runs SET status = 'running', started_at = ?, owner = NULL, worker = ? WHERE run_id = ? AND status = 'queued'")
        .run(at, worker, runId).changes === 1;
    if (ok) {
      this.#opts.log.info({ runId, worker }, 'run started on a worker');
      this.emit('progress', runId);
    }
    return ok;
  }

  #runOf(runId: string, worker: string): RunView | undefined {
    const run = this.#opts.store.get(runId);
    return run && run.status === 'running' && run.worker === worker ? run : undefined;
  }

  /** Progress of a run on `worker`; answers whether it must stop (cancelled, or no longer its). */
  progress(runId: string, worker: string, report: ProgressReport): { cancelRequested: boolean } {
    if (!this.#runOf(runId, worker)) return { cancelRequested: true };
    const answer = this.#opts.store.record(runId, report);
    this.emit('progress', runId);
    return answer;
  }

  /** The outcome of a run on `worker`; false when the run had already ended (interrupted, lost). */
  finish(runId: string, worker: string, result: EngineResult): boolean {
    const { store, log } = this.#opts;
    if (!this.#runOf(runId, worker)) return false;
    const cancelled = store.cancelRequested(runId) && result.status !== 'succeeded';
    // Stopped on the worker without a cancel: the worker shut down, the run did not finish.
    const stopped = !cancelled && result.status === 'cancelled';
    const status = cancelled ? 'cancelled' : stopped ? 'failed' : result.status;
    const finished = store.finish(runId, {
      status,
      rowsRead: result.rowsRead,
      rowsWritten: status === 'succeeded' ? result.rowsWritten : 0,
      rowsRejected: result.rowsRejected,
      error: status === 'succeeded' ? null : stopped ? `interrupted: worker ${worker} stopped while the run was running` : (result.error ?? status),
      steps: result.steps.length ? result.steps : (this.#opts.store.get(runId) as RunView).steps,
    });
    log[status === 'succeeded' ? 'info' : 'warn'](
      { runId, worker, pipelineId: finished.pipelineId, status, rowsRead: finished.rowsRead, rowsWritten: finished.rowsWritten, error: finished.error ?? undefined },
      'run finished',
    );
    this.#settle(finished);
    this.pump();
    return true;
  }

  /** Resolves with the run once it has ended; polls the store (the run may end in another process). */
  wait(runId: string): Promise<RunView> {
    const { store, scheduler } = this.#opts;
    const first = store.get(runId);
    if (!first) return Promise.reject(new NotFoundError(`Run ${runId} not found`));
    return new Promise((resolve) => {
      let last = '';
      const look = () => {
        const run = store.get(runId) as RunView;
        const seen = JSON.stringify([run.status, run.steps]);
        if (seen !== last) {
          last = seen;
          this.emit('progress', runId);
        }
        if (run.status !== 'queued' && run.status !== 'running') resolve(run);
        else scheduler(look, 250);
      };
      look();
    });
  }

  /** Nothing executes in this process. */
  async idle(): Promise<void> {
    await this.settled();
  }

  /** Stops admitting and sweeping; queued runs stay queued, runs on workers go on. */
  async close(): Promise<void> {
    this.#closing = true;
    this.#sweep?.();
    this.#sweep = undefined;
    await this.#pumping;
    await this.#jobs.close();
  }

  #settle(run: RunView): void {
    this.emit('finished', run);
  }
}
