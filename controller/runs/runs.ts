import type { EventEmitter } from 'node:events';
import type { Store } from '../store/db.ts';
import { realScheduler, type Scheduler } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import { SecretStore } from '../secrets/store.ts';
import type { Clock } from '../types.ts';
import { LocalRunDispatcher } from './dispatcher.ts';
import { QueueRunDispatcher, type JobQueue } from './queue/dispatcher.ts';
// Not the engine's index: the engine itself (and its drivers) runs in a worker and is loaded there only.
import { StoreConnectionResolver } from './engine/connections.ts';
import { NetworkEgressPolicy } from './engine/egress.ts';
import { RunRetention } from './retention.ts';
import { ScheduleRunner } from './schedules.ts';
import { readPipelineRow } from '../kinds/pipeline/store.ts';
import type { RunOutcome } from './types.ts';
import { pipelineClient } from './access.ts';
import { RunStore, type RunView } from './store.ts';
import { WorkerThreadEngine } from './thread-engine.ts';
import type { PipelineEngine } from './types.ts';

export interface PipelineRunsOptions {
  db: Store;
  config: Config;
  secrets: SecretStore;
  /** Default: the streaming engine in a worker thread per run. */
  engine?: PipelineEngine;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  env?: NodeJS.ProcessEnv;
  /** This process as recorded on its runs (tests simulate other processes). */
  owner?: string;
  /** The reconciler's events: a Pipeline applied or pruned makes the schedules look again. */
  pipelineEvents?: Pick<EventEmitter, 'on'>;
  /** Once per finished run (metrics and notifications). */
  onFinished?: (run: RunOutcome) => void;
  /**
   * The retention sweep's hourly timer: its own (default: real, unref'd), so it stays out of
   * the timers a test drives and counts through `scheduler`.
   */
  retentionScheduler?: Scheduler;
  /** Queue mode: where jobs go (default graphile-worker at BI_QUEUE_URL; tests inject). */
  jobs?: JobQueue;
}

/** A finished run as metrics and notifications see it. */
export function runOutcome(db: Store, run: RunView): RunOutcome | undefined {
  if (run.status !== 'succeeded' && run.status !== 'failed' && run.status !== 'cancelled') return undefined;
  const key = readPipelineRow(db, run.pipelineId)?.manifest_key;
  const clientId = pipelineClient(db, run.pipelineId);
  const failedStep = run.steps.find((s) => s.status === 'failed')?.name;
  return {
    runId: run.runId,
    pipelineId: run.pipelineId,
    ...(key?.startsWith('Pipeline/') ? { pipelineName: key.slice('Pipeline/'.length) } : {}),
    ...(clientId ? { clientId } : {}),
    status: run.status,
    durationMs: run.durationMs ?? 0,
    rowsRead: run.rowsRead,
    rowsWritten: run.rowsWritten,
    rowsRejected: run.rowsRejected,
    error: run.error,
    ...(failedStep && run.status === 'failed' ? { failedStep } : {}),
  };
}

/**
 * Pipeline runs of one controller: the run records, the dispatcher (in-process by default),
 * the schedules and the retention sweep. Building it starts nothing (one-shot `bictl` commands
 * use the dispatcher alone); `start()` fails runs a crash interrupted and starts the schedules
 * and the sweep.
 */
export class PipelineRuns {
  readonly store: RunStore;
  /** In-process by default; the PostgreSQL job queue and `bictl worker`s when BI_QUEUE_URL is set. */
  readonly dispatcher: LocalRunDispatcher | QueueRunDispatcher;
  readonly schedules: ScheduleRunner;
  /** Deletes ended runs past BI_RUN_RETENTION (at start, then hourly). */
  readonly retention: RunRetention;
  /** Where pipelines may connect (never the controller's own listener, never link-local). */
  readonly egress: NetworkEgressPolicy;
  readonly #listen: { host: string; port: number };

  constructor(opts: PipelineRunsOptions) {
    const { db, config, clock, scheduler, log } = opts;
    const env = opts.env ?? process.env;
    const { secrets } = opts;
    this.store = new RunStore({ db, clock });
    this.#listen = { host: config.host, port: config.port };
    const egress = { listen: this.#listen, allowHosts: config.pipelineEgress };
    this.egress = new NetworkEgressPolicy(egress);
    this.dispatcher = config.queue
      ? new QueueRunDispatcher({
          db,
          store: this.store,
          secrets,
          clock,
          scheduler,
          log,
          queue: config.queue,
          egress: () => ({ listen: { ...this.#listen }, allowHosts: config.pipelineEgress }),
          jobs: opts.jobs,
          owner: opts.owner,
        })
      : new LocalRunDispatcher({
          db,
          store: this.store,
          engine: opts.engine ?? new WorkerThreadEngine({ egress, limits: { maxResponseBytes: config.runMaxResponseBytes, maxRecordBytes: config.runMaxRecordBytes } }),
          clock,
          scheduler,
          log,
          concurrency: config.runConcurrency,
          // A run resolves only the connections its own pipeline references (its tenant's).
          connections: (allowed) => new StoreConnectionResolver({ db, secrets, env, mayUse: (id) => allowed.includes(id) }),
          egress: this.egress,
          filesDir: config.pipelineFilesDir,
          owner: opts.owner,
        });
    this.schedules = new ScheduleRunner({ db, dispatcher: this.dispatcher, clock, scheduler, log, minIntervalMs: config.scheduleMinIntervalMs });
    this.retention = new RunRetention({ db, clock, scheduler: opts.retentionScheduler ?? realScheduler, log, retentionMs: config.runRetentionMs });
    const onFinished = opts.onFinished;
    if (onFinished) {
      this.dispatcher.on('finished', (run: RunView) => {
        const outcome = runOutcome(db, run);
        try {
          if (outcome) onFinished(outcome);
        } catch (err) {
          log.error({ runId: run.runId, err: (err as Error).message }, 'observing a run failed');
        }
      });
    }
    opts.pipelineEvents?.on('event', (e: { type: string; kind?: string }) => {
      if (e.type === 'phase' && e.kind === 'Pipeline') void this.schedules.refresh();
    });
  }

  /** The port the server really listens on (PORT=0 picks one): pipelines may not reach it. */
  listening(port: number): void {
    this.#listen.port = port;
  }

  async start(): Promise<void> {
    this.dispatcher.recover();
    await this.schedules.start();
    this.retention.start();
  }

  async close(): Promise<void> {
    this.schedules.stop();
    this.retention.stop();
    await this.retention.settled();
    await this.dispatcher.close();
  }
}
