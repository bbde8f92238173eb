import { EventEmitter } from 'node:events';
import { hostname } from 'node:os';
import type { Store } from '../store/db.ts';
import type { Scheduler } from '../clock.ts';
import { ConflictError, NotFoundError } from '../errors.ts';
import { readPipeline } from './pipeline-view.ts';
import { ClientHeldError } from '../authz/holds.ts';
import { clientHold } from '../kinds/client/registry.ts';
import { pipelineOwner } from '../kinds/pipeline/store.ts';
import { actorOf, appendAudit, type AuditInput } from '../audit/log.ts';
import type { Logger } from '../log.ts';
import type { Clock } from '../types.ts';
import { pipelineClient, pipelineConnections } from './access.ts';
import { nextFairRun, type Tenant, type WaitingRun } from './fairness.ts';
import { RunRecorder } from './recorder.ts';
import type { RunStore, RunView } from './store.ts';
import type { ConnectionResolver, EgressPolicy, EngineResult, PipelineEngine, RunTrigger, StepProgress } from './types.ts';

/**
 * The one way runs are started and cancelled. The embedded default runs them in this process
 * (LocalRunDispatcher); a PostgreSQL job queue with `bictl worker` processes would be another
 * implementation of the same three calls (README, "Pipeline runs → beyond one machine").
 */
export interface RunDispatcher {
  /** Records a run `queued` and hands it to a runner. NotFoundError, ActiveRunError (409). */
  start(pipelineId: string, trigger: RunTrigger, actor: string | null): Promise<RunView>;
  /** A queued run is cancelled at once; a running one is told to stop (it ends `cancelled`). */
  cancel(runId: string): Promise<RunView>;
  close(): Promise<void>;
}

export interface LocalRunDispatcherOptions {
  db: Store;
  store: RunStore;
  engine: PipelineEngine;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  /** BI_RUN_CONCURRENCY: runs executing at once; the others wait `queued`. */
  concurrency: number;
  /** The connections a run may resolve: those its pipeline references. */
  connections: (allowed: readonly string[]) => ConnectionResolver;
  egress: EgressPolicy;
  filesDir: string;
  /** This process as recorded on its runs (`host:pid`). */
  owner?: string;
}

export const processOwner = (): string => `${hostname()}:${process.pid}`;

/**
 * Whether the process that owns a run still lives: a run of this very process is not (a new
 * dispatcher is starting in it), one of another process on this host is when its pid answers
 * signal 0; runs of other hosts are left to them.
 */
export function ownerAlive(owner: string | null, self: string = processOwner()): boolean {
  if (!owner || owner === self) return false;
  const sep = owner.lastIndexOf(':');
  const host = owner.slice(0, sep);
  const pid = Number(owner.slice(sep + 1));
  if (host !== hostname()) return true;
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const pendingSteps = (steps: { id: string; type: StepProgress['type']; name: string }[]): StepProgress[] =>
  steps.map((s) => ({ stepId: s.id, type: s.type, name: s.name, status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null }));

/**
 * Runs pipelines in this process, at most `concurrency` at once; waiting runs start
 * round-robin across tenants (fairness.ts). Emits `progress` (runId) after each recorded flush and `finished` (RunView) at a run's end.
 */
export class LocalRunDispatcher extends EventEmitter implements RunDispatcher {
  readonly #opts: LocalRunDispatcherOptions;
  readonly #owner: string;
  /** Waiting runs in the order they were queued; the next is chosen by nextFairRun. */
  readonly #queue: WaitingRun[] = [];
  readonly #running = new Map<string, { controller: AbortController; tenant: Tenant }>();
  /** Per tenant, the sequence number of its last started run (the round-robin turn). */
  readonly #lastStarted = new Map<Tenant, number>();
  #starts = 0;
  readonly #executions = new Set<Promise<void>>();
  readonly #waiters = new Map<string, ((run: RunView) => void)[]>();
  #closing = false;

  constructor(opts: LocalRunDispatcherOptions) {
    super();
    this.#opts = opts;
    this.#owner = opts.owner ?? processOwner();
  }

  get owner(): string {
    return this.#owner;
  }

  /** Runs left queued or running by a process that is gone become `failed` (`interrupted`). */
  recover(): string[] {
    const failed = this.#opts.store.failInterrupted((owner) => ownerAlive(owner, this.#owner));
    for (const runId of failed) {
      this.#opts.log.warn({ runId }, 'run interrupted by a restart: marked failed');
      this.emit('finished', this.#opts.store.get(runId));
    }
    return failed;
  }

  async start(pipelineId: string, trigger: RunTrigger, actor: string | null): Promise<RunView> {
    if (this.#closing) throw new ConflictError('the controller is shutting down');
    const pipeline = readPipeline(this.#opts.db, pipelineId, this.#opts.clock());
    if (!pipeline) throw new NotFoundError(`Pipeline ${pipelineId} not found`);
    const audit = admitStart(this.#opts.db, this.#opts.clock, pipelineId, trigger, actor);
    const run = this.#opts.store.create({ pipelineId, trigger, actor, owner: this.#owner, steps: pendingSteps(pipeline.steps) });
    audit('ok');
    this.#opts.log.info({ runId: run.runId, pipelineId, trigger }, 'run queued');
    this.#queue.push({ runId: run.runId, tenant: pipelineClient(this.#opts.db, pipelineId) ?? null, queuedAt: Date.parse(run.queuedAt) });
    this.#pump();
    return this.#opts.store.get(run.runId) as RunView;
  }

  async cancel(runId: string): Promise<RunView> {
    const { store } = this.#opts;
    const run = store.get(runId);
    if (!run) throw new NotFoundError(`Run ${runId} not found`);
    if (run.status === 'queued' || run.status === 'running') {
      const owner = pipelineOwner(this.#opts.db, run.pipelineId);
      appendAudit(this.#opts.db, { actor: { type: 'controller', id: 'controller' }, action: 'run.cancel', ...(owner ? { clientId: owner } : {}), object: { kind: 'Run', id: runId }, result: 'ok' }, this.#opts.clock);
    }
    if (run.status === 'queued' && store.cancelQueued(runId)) {
      const i = this.#queue.findIndex((w) => w.runId === runId);
      if (i >= 0) this.#queue.splice(i, 1);
      const cancelled = store.get(runId) as RunView;
      this.#opts.log.info({ runId }, 'run cancelled while queued');
      this.#settle(cancelled);
      return cancelled;
    }
    const now = store.get(runId) as RunView;
    if (now.status === 'queued' || now.status === 'running') {
      store.requestCancel(runId);
      this.#running.get(runId)?.controller.abort(new Error('cancelled'));
      this.#opts.log.info({ runId }, 'run cancel requested');
      return store.get(runId) as RunView;
    }
    throw new ConflictError(`Run ${runId} has already ended (${now.status})`);
  }

  /** Resolves with the run once it has ended (immediately when it has). */
  wait(runId: string): Promise<RunView> {
    const run = this.#opts.store.get(runId);
    if (!run) return Promise.reject(new NotFoundError(`Run ${runId} not found`));
    if (run.status !== 'queued' && run.status !== 'running') return Promise.resolve(run);
    return new Promise((resolve) => this.#waiters.set(runId, [...(this.#waiters.get(runId) ?? []), resolve]));
  }

  /** Resolves when nothing runs or waits in this process. */
  async idle(): Promise<void> {
    while (this.#executions.size) await Promise.allSettled([...this.#executions]);
  }

  /** Stops: queued runs and running ones (told to stop) end `failed` (`interrupted`). */
  async close(): Promise<void> {
    this.#closing = true;
    for (const { runId } of this.#queue.splice(0)) this.#interrupt(runId, 'queued');
    for (const { controller } of this.#running.values()) controller.abort(new Error('shutdown'));
    await this.idle();
  }

  #interrupt(runId: string, was: string): void {
    const run = this.#opts.store.get(runId);
    if (!run || (run.status !== 'queued' && run.status !== 'running')) return;
    this.#settle(
      this.#opts.store.finish(runId, {
        status: 'failed',
        rowsRead: run.rowsRead,
        rowsWritten: 0,
        rowsRejected: run.rowsRejected,
        error: `interrupted: the controller shut down while the run was ${was}`,
        steps: run.steps,
      }),
    );
  }

  #pump(): void {
    while (!this.#closing && this.#running.size < this.#opts.concurrency && this.#queue.length) {
      const next = nextFairRun(this.#queue, { active: this.#activeByTenant(), lastStarted: this.#lastStarted });
      if (!next) break;
      this.#queue.splice(this.#queue.indexOf(next), 1);
      const { runId, tenant } = next;
      if (!this.#opts.store.markRunning(runId, this.#owner)) continue;
      this.#lastStarted.set(tenant, ++this.#starts);
      const controller = new AbortController();
      this.#running.set(runId, { controller, tenant });
      const execution = this.#execute(runId, controller)
        .catch((err: Error) => this.#opts.log.error({ runId, err: err.message }, 'run bookkeeping failed'))
        .finally(() => {
          this.#running.delete(runId);
          this.#executions.delete(execution);
          this.#pump();
        });
      this.#executions.add(execution);
    }
  }

  #activeByTenant(): Map<Tenant, number> {
    const active = new Map<Tenant, number>();
    for (const { tenant } of this.#running.values()) active.set(tenant, (active.get(tenant) ?? 0) + 1);
    return active;
  }

  async #execute(runId: string, controller: AbortController): Promise<void> {
    const { store, db, clock, log } = this.#opts;
    const run = store.get(runId) as RunView;
    log.info({ runId, pipelineId: run.pipelineId }, 'run started');
    const recorder = new RunRecorder({
      runId,
      store,
      clock,
      scheduler: this.#opts.scheduler,
      steps: run.steps,
      onCancelRequested: () => controller.abort(new Error('cancelled')),
      onError: (err) => log.warn({ runId, err: err.message }, 'run progress not recorded; retried on the next flush'),
      onFlushed: () => this.emit('progress', runId),
    });
    const pipeline = readPipeline(db, run.pipelineId, clock());
    let result: EngineResult;
    if (!pipeline) {
      result = this.#failure(recorder.steps, `pipeline ${run.pipelineId} no longer exists`);
    } else {
      try {
        result = await this.#opts.engine.run({
          runId,
          pipelineId: pipeline.pipelineId,
          source: pipeline.source,
          destination: pipeline.destination,
          steps: pipeline.steps.map((s) => ({ id: s.id, type: s.type, name: s.name, config: s.config })),
          connections: this.#opts.connections(pipelineConnections(db, pipeline.pipelineId) ?? []),
          egress: this.#opts.egress,
          filesDir: this.#opts.filesDir,
          owner: pipelineOwner(db, pipeline.pipelineId) ?? null,
          signal: controller.signal,
          hooks: recorder,
          now: clock,
        });
      } catch (err) {
        result = this.#failure(recorder.steps, `engine: ${(err as Error).message}`);
      }
    }
    recorder.close();
    const aborted = controller.signal.aborted && result.status !== 'succeeded';
    // Aborted by a shutdown rather than a cancel: the run did not finish, it was interrupted.
    const shutdown = aborted && this.#closing && !store.cancelRequested(runId);
    const status = shutdown ? 'failed' : aborted ? 'cancelled' : result.status;
    const error = shutdown ? 'interrupted: the controller shut down while the run was running' : status === 'succeeded' ? null : result.error;
    const finished = store.finish(runId, {
      status,
      rowsRead: result.rowsRead,
      rowsWritten: status === 'succeeded' ? result.rowsWritten : 0,
      rowsRejected: result.rowsRejected,
      error,
      steps: result.steps.length ? result.steps : recorder.steps,
    });
    log[status === 'succeeded' ? 'info' : 'warn'](
      { runId, pipelineId: run.pipelineId, status, rowsRead: finished.rowsRead, rowsWritten: finished.rowsWritten, rowsRejected: finished.rowsRejected, error: finished.error ?? undefined },
      'run finished',
    );
    this.#settle(finished);
  }

  #failure(steps: StepProgress[], error: string): EngineResult {
    return { status: 'failed', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error, steps };
  }

  #settle(run: RunView): void {
    const waiters = this.#waiters.get(run.runId) ?? [];
    this.#waiters.delete(run.runId);
    for (const resolve of waiters) resolve(run);
    this.emit('finished', run);
  }
}

/**
 * Whether a run of `pipelineId` may start, for every dispatcher: a suspended or offboarded client's
 * pipelines do not run, whoever starts them (the refusal is audited and thrown, 409). Returns the
 * audit of the start, to record once the run exists.
 */
export function admitStart(db: Store, clock: Clock, pipelineId: string, trigger: RunTrigger, actor: string | null): (result: AuditInput['result']) => void {
  const owner = pipelineOwner(db, pipelineId);
  const hold = owner ? clientHold(db, owner) : undefined;
  const audit = (result: AuditInput['result']) =>
    appendAudit(
      db,
      { actor: trigger === 'schedule' ? { type: 'controller', id: 'scheduler' } : actorOf(actor), action: 'run.start', ...(owner ? { clientId: owner } : {}), object: { kind: 'Pipeline', id: pipelineId }, result },
      clock,
    );
  if (owner && hold) {
    audit('refused');
    throw new ClientHeldError(owner, hold);
  }
  return audit;
}
