import { hostname } from 'node:os';
import type { QueueConfig } from '../../config.ts';
import type { Logger } from '../../log.ts';
import { NetworkEgressPolicy } from '../engine/egress.ts';
import type { LogLine } from '../store.ts';
import { MAX_LOG_LINES, MAX_REJECTS_KEPT } from '../store.ts';
import type { EngineResult, LogLevel, PipelineEngine, RejectedRow, RunHooks, StepProgress } from '../types.ts';
import { WorkerThreadEngine } from '../thread-engine.ts';
import { JobConnectionResolver, RUN_TASK, type RunJob } from './job.ts';

/** Progress crosses to the controller at most this often while rows flow… */
export const REPORT_INTERVAL_MS = 250;
/** …and at least this often while a run goes, so a cancel reaches it within about half a second. */
export const CANCEL_POLL_MS = 500;
/** Past this many buffered rejects or log lines a report goes at once (bounded bodies). */
const REPORT_AT = 100;
const MAX_VALUE_CHARS = 1000;
/** The outcome of a run is retried this long while the controller is unreachable. */
const FINISH_RETRY_MS = 10 * 60_000;

export const defaultWorkerName = (): string => `${hostname()}:${process.pid}`;

/** The refusal of a report: 401 stops the worker at start; 404 / 409 are answered per run. */
export class ReportError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ReportError';
  }
}

/** POSTs to the controller's worker routes with the worker token. */
export class ControllerClient {
  readonly #base: string;
  readonly #token: string;
  constructor(opts: { controllerUrl: string; token: string }) {
    this.#base = opts.controllerUrl.replace(/\/+$/, '');
    this.#token = opts.token;
  }

  async post<T>(path: string, body: unknown): Promise<T> {
    const res = await fetch(`${this.#base}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.#token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    if (!res.ok) {
      let message = text;
      try {
        message = (JSON.parse(text) as { error?: string }).error ?? text;
      } catch {
        // not JSON: the text itself
      }
      throw new ReportError(res.status, `${path}: ${res.status} ${message}`.slice(0, 500));
    }
    return JSON.parse(text) as T;
  }
}

/** A rejected row as it travels: long texts cut (the controller keeps them cut anyway). */
function cutRow(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'string' && v.length > MAX_VALUE_CHARS ? `${v.slice(0, MAX_VALUE_CHARS)}…` : v;
  return out;
}

/**
 * The engine's hooks on a worker: progress, the first 1,000 rejects and log lines are buffered
 * and POSTed to the controller every 250 ms while something changed and every second anyway;
 * an answer `cancelRequested` aborts the run.
 */
export class RunReporter implements RunHooks {
  readonly #steps = new Map<string, StepProgress>();
  #dirty = false;
  #rejects: RejectedRow[] = [];
  #logs: LogLine[] = [];
  #rejectsSeen = 0;
  #logsSeen = 0;
  #last = 0;
  #inFlight: Promise<void> | undefined;
  readonly #timer: NodeJS.Timeout;

  constructor(
    readonly runId: string,
    private readonly opts: { client: ControllerClient; worker: string; abort: () => void; log: Logger },
  ) {
    this.#timer = setInterval(() => this.#tick(), REPORT_INTERVAL_MS);
  }

  onStep(progress: StepProgress): void {
    this.#steps.set(progress.stepId, { ...progress });
    this.#dirty = true;
  }

  onReject(rejected: RejectedRow): void {
    if (this.#rejectsSeen++ >= MAX_REJECTS_KEPT) return;
    this.#rejects.push({ step: rejected.step, row: cutRow(rejected.row), reasons: rejected.reasons });
    if (this.#rejects.length >= REPORT_AT) this.#flush();
  }

  onLog(level: LogLevel, message: string): void {
    if (this.#logsSeen++ >= MAX_LOG_LINES) return;
    this.#logs.push({ at: new Date().toISOString(), level, message });
    if (this.#logs.length >= REPORT_AT) this.#flush();
  }

  #tick(): void {
    if (this.#dirty || this.#rejects.length || this.#logs.length || Date.now() - this.#last >= CANCEL_POLL_MS) this.#flush();
  }

  #flush(): void {
    if (this.#inFlight) return;
    const report = { worker: this.opts.worker, steps: this.#dirty ? [...this.#steps.values()] : undefined, rejects: this.#rejects, logs: this.#logs };
    this.#dirty = false;
    this.#rejects = [];
    this.#logs = [];
    this.#last = Date.now();
    this.#inFlight = this.opts.client
      .post<{ cancelRequested?: boolean }>(`/v1/workers/runs/${this.runId}/progress`, report)
      .then((answer) => {
        if (answer.cancelRequested) this.opts.abort();
      })
      .catch((err: Error) => {
        // Kept for the next report: the controller may be restarting.
        if (report.steps) this.#dirty = true;
        this.#rejects = [...report.rejects, ...this.#rejects];
        this.#logs = [...report.logs, ...this.#logs];
        this.opts.log.warn({ runId: this.runId, err: err.message }, 'progress not reported; retried');
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
  }

  /** Stops the timer and sends what is left. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#inFlight;
    if (this.#rejects.length || this.#logs.length) {
      this.#flush();
      await this.#inFlight;
    }
  }
}

export interface RunWorkerOptions {
  queue: QueueConfig & { workerToken: string; controllerUrl: string };
  name: string;
  concurrency: number;
  version: string;
  /** BI_SECRET_KEY: decrypts the stored secrets a job carries sealed. */
  secretKey?: string;
  /** Where `passwordEnv` names are read (the worker's environment). */
  env: NodeJS.ProcessEnv;
  /** BI_PIPELINE_FILES_DIR of this machine. */
  filesDir: string;
  log: Logger;
  /** Default: the streaming engine in a worker thread per run, as in the controller. */
  engine?: (job: RunJob) => PipelineEngine;
}

/**
 * `bictl worker`: takes run jobs from the PostgreSQL queue (graphile-worker, LISTEN/NOTIFY),
 * claims each from the controller, runs it with the same engine as the controller, reports
 * progress and the outcome over HTTP, and sends a heartbeat every BI_WORKER_HEARTBEAT_INTERVAL.
 * It never writes the controller's store; the queue holds jobs only.
 */
export class RunWorker {
  readonly #opts: RunWorkerOptions;
  readonly #client: ControllerClient;
  readonly #running = new Map<string, AbortController>();
  #runner: import('graphile-worker').Runner | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #stopping = false;

  constructor(opts: RunWorkerOptions) {
    this.#opts = opts;
    this.#client = new ControllerClient({ controllerUrl: opts.queue.controllerUrl, token: opts.queue.workerToken });
  }

  get running(): string[] {
    return [...this.#running.keys()];
  }

  async #beat(): Promise<void> {
    const { name, version, concurrency } = this.#opts;
    await this.#client.post('/v1/workers/heartbeat', { name, version, concurrency, running: this.running });
  }

  /** First heartbeat (a refused token stops here: no job is taken), then the queue. */
  async start(): Promise<void> {
    await this.#beat();
    this.#heartbeat = setInterval(() => {
      this.#beat().catch((err: Error) => this.#opts.log.warn({ err: err.message }, 'heartbeat not delivered'));
    }, this.#opts.queue.heartbeatMs);
    const { run, Logger } = await import('graphile-worker');
    const log = this.#opts.log;
    this.#runner = await run({
      connectionString: this.#opts.queue.url,
      schema: this.#opts.queue.schema,
      concurrency: this.#opts.concurrency,
      noHandleSignals: true,
      pollInterval: 2000,
      logger: new Logger((scope) => (level, message) => {
        if (level === 'error' || level === 'warning') log.warn({ scope: scope.label }, message);
      }),
      taskList: { [RUN_TASK]: async (payload) => this.#runJob(payload as RunJob) },
    });
    log.info({ worker: this.#opts.name, concurrency: this.#opts.concurrency }, 'worker started');
  }

  async #runJob(job: RunJob): Promise<void> {
    const { name, log } = this.#opts;
    const claim = await this.#retrying(job.runId, 'claim', () => this.#client.post<{ claimed?: boolean }>(`/v1/workers/runs/${job.runId}/claim`, { worker: name }));
    if (!claim?.claimed) {
      log.info({ runId: job.runId }, 'run no longer queued (cancelled): skipped');
      return;
    }
    const controller = new AbortController();
    this.#running.set(job.runId, controller);
    // The running list reaches the controller at once, not at the next heartbeat.
    void this.#beat().catch(() => undefined);
    log.info({ runId: job.runId, pipelineId: job.pipelineId }, 'run started');
    const reporter = new RunReporter(job.runId, { client: this.#client, worker: name, abort: () => controller.abort(new Error('cancelled')), log });
    let result: EngineResult;
    try {
      const engine = this.#opts.engine?.(job) ?? new WorkerThreadEngine({ egress: job.egress });
      result = await engine.run({
        runId: job.runId,
        pipelineId: job.pipelineId,
        source: job.spec.source,
        destination: job.spec.destination,
        steps: job.spec.steps,
        connections: new JobConnectionResolver(job, { secretKey: this.#opts.secretKey, env: this.#opts.env, worker: name }),
        egress: new NetworkEgressPolicy(job.egress),
        filesDir: this.#opts.filesDir,
        signal: controller.signal,
        hooks: reporter,
        now: () => new Date(),
      });
    } catch (err) {
      result = { status: 'failed', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error: `engine: ${(err as Error).message}`, steps: [] };
    }
    await reporter.close();
    if (controller.signal.aborted && result.status !== 'succeeded') result = { ...result, status: 'cancelled' };
    await this.#finish(job.runId, result);
    this.#running.delete(job.runId);
    void this.#beat().catch(() => undefined);
    log[result.status === 'succeeded' ? 'info' : 'warn']({ runId: job.runId, status: result.status, error: result.error ?? undefined }, 'run finished');
  }

  /** The outcome, retried while the controller is unreachable (a restart); refused ones are dropped. */
  async #finish(runId: string, result: EngineResult): Promise<void> {
    await this.#retrying(runId, 'outcome', () => this.#client.post(`/v1/workers/runs/${runId}/finish`, { worker: this.#opts.name, result }));
  }

  /** A report retried while the controller is unreachable (a restart); undefined once refused or given up. */
  async #retrying<T>(runId: string, what: string, send: () => Promise<T>): Promise<T | undefined> {
    const until = Date.now() + FINISH_RETRY_MS;
    for (let wait = 250; ; wait = Math.min(wait * 2, 5000)) {
      try {
        return await send();
      } catch (err) {
        if ((err instanceof ReportError && err.status < 500) || Date.now() > until || this.#stopping) {
          this.#opts.log.error({ runId, err: (err as Error).message }, `run ${what} not reported`);
          return undefined;
        }
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** Takes no new job; lets the running ones finish (abort: tells them to stop first). */
  async stop(opts: { abort?: boolean } = {}): Promise<void> {
    this.#stopping = true;
    if (opts.abort) for (const c of this.#running.values()) c.abort(new Error('worker stopping'));
    await this.#runner?.stop();
    clearInterval(this.#heartbeat);
  }
}
