import { tmpdir } from 'node:os';
import type { Batch, EngineInput, EngineResult, LogLevel, PipelineEngine, RejectedRow, Row, RunStep, StepProgress } from '../types.ts';
import { RunReach } from '../reach.ts';
import { realSleep, type Sleep } from './sources/api.ts';
import { DEFAULT_SOURCE_LIMITS, type SourceLimits } from './sources/limits.ts';
import { type LoadReport, type PendingWrite, type RunScope, type StepContext, type StepRunner } from './step.ts';
import { DbLookupStep } from './steps/db-lookup.ts';
import { TableWriteStep } from './steps/load.ts';
import { QualityStep } from './steps/quality.ts';
import { ReconcileStep } from './steps/reconcile.ts';
import { SourceStep } from './steps/source.ts';
import { RawCells } from './raw-cells.ts';
import { TransformStep } from './steps/transform.ts';
import { ValidateStep } from './steps/validate.ts';

export interface StreamingEngineOptions {
  /** Rows per batch (sources read this many at a time). Default 2000: a batch holds the thread for a few ms. */
  batchSize?: number;
  /** Temporary files of quality rules (spilled rows, key hashes). Default os.tmpdir(). */
  tmpDir?: string;
  /** API sources: backoff delay (tests inject one that does not sleep), retries, timeouts. */
  sleep?: Sleep;
  apiMaxRetries?: number;
  apiBackoffBaseMs?: number;
  apiBackoffMaxMs?: number;
  apiTimeoutMs?: number;
  /** Sources: bytes of one response and of one record at most (`BI_RUN_MAX_RESPONSE_BYTES`, `BI_RUN_MAX_RECORD_BYTES`). */
  limits?: SourceLimits;
  /** Quantiles of outlier_detection: numbers sorted in memory at most. */
  quantileMemoryCap?: number;
  /** Monotonic milliseconds for durations. */
  clock?: () => number;
}

/** A failure raised by the step at `index` (errors from upstream keep their own step). */
class StepFailure extends Error {
  constructor(
    readonly index: number,
    readonly failure: unknown,
  ) {
    super(failure instanceof Error ? failure.message : String(failure));
  }
}

class Cancelled extends Error {}

interface Tracked {
  step: RunStep;
  progress: StepProgress;
  runner?: StepRunner;
  started: number;
  /** Rows that entered this step from upstream (a source adds the rows it reads). */
  passedIn: number;
}

const asError = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * Runs a pipeline's steps in order over a stream of row batches: each step is an async
 * transformer pulling batches from the one before (backpressure is the pull), so at most a few
 * batches per step are in memory. Loads and stages keep their transaction open until every step
 * succeeded; then they commit in step order. Anything else — a failed step, a failed check, a
 * cancel — rolls all of them back. Never throws.
 */
export class StreamingPipelineEngine implements PipelineEngine {
  readonly #o: StreamingEngineOptions;

  constructor(opts: StreamingEngineOptions = {}) {
    this.#o = opts;
  }

  async run(input: EngineInput): Promise<EngineResult> {
    const clock = this.#o.clock ?? (() => performance.now());
    const hooks = {
      onStep: (p: StepProgress) => safe(() => input.hooks.onStep({ ...p, ...(p.checks ? { checks: { ...p.checks } } : {}) })),
      onReject: (r: RejectedRow) => safe(() => input.hooks.onReject(r)),
      onLog: (level: LogLevel, m: string) => safe(() => input.hooks.onLog(level, m)),
    };
    const tracked: Tracked[] = input.steps.map((step) => ({
      step,
      started: 0,
      passedIn: 0,
      progress: { stepId: step.id, type: step.type, name: step.name, status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null },
    }));
    const pending: PendingWrite[] = [];
    const loads: LoadReport[] = [];
    const mappedFields: string[] = [];
    const rawCells = new RawCells();
    const rowsRead = (upTo = tracked.length - 1): number =>
      tracked.slice(0, upTo + 1).reduce((n, t) => n + (t.runner?.rowsRead?.() ?? 0), 0);
    const rowsRejected = (upTo = tracked.length - 1): number => tracked.slice(0, upTo + 1).reduce((n, t) => n + t.progress.rowsRejected, 0);
    const scope: RunScope = {
      runId: input.runId,
      pipelineId: input.pipelineId,
      sourceType: input.source.type,
      connections: input.connections,
      egress: input.egress,
      reach: new RunReach({ owner: input.owner ?? null, filesRoot: input.filesDir }),
      signal: input.signal,
      batchSize: this.#o.batchSize ?? 2000,
      tmpDir: this.#o.tmpDir ?? tmpdir(),
      limits: this.#o.limits ?? DEFAULT_SOURCE_LIMITS,
      mappedFields,
      rawCells,
      pending,
      loads,
      rowsRead: () => rowsRead(),
      rowsRejected: () => rowsRejected(),
      log: hooks.onLog,
    };
    const report = (t: Tracked): void => {
      if (t.progress.status === 'running') t.progress.durationMs = Math.max(0, Math.round(clock() - t.started));
      hooks.onStep(t.progress);
    };
    const finish = (t: Tracked, status: StepProgress['status'], message?: string | null): void => {
      const p = t.progress;
      if (p.status === 'running') p.durationMs = Math.max(0, Math.round(clock() - t.started));
      p.status = status;
      if (message !== undefined) p.message = message;
      const checks = t.runner?.checks?.();
      if (checks) p.checks = checks;
      hooks.onStep(p);
    };

    hooks.onLog('info', `run ${input.runId} of ${input.pipelineId}: ${tracked.length} steps`);
    let failure: { index: number; message: string } | undefined;
    let cancelled = false;
    const indexOf = (id: string): number => tracked.findIndex((t) => t.step.id === id);
    try {
      // Build every step first: a bad config fails its step before anything is read or written.
      tracked.forEach((t, i) => {
        try {
          t.runner = this.#runner(t.step, scope, (id) => ({ read: rowsRead(indexOf(id)), rejected: rowsRejected(indexOf(id)) }), i === 0);
          if (t.runner instanceof TransformStep) mappedFields.push(...t.runner.targets);
        } catch (err) {
          throw new StepFailure(i, err);
        }
      });
      const touched = fieldsTouched(tracked.map((t) => t.runner as StepRunner));
      if (touched) rawCells.enable(touched);
      let stream: AsyncIterable<Batch> = (async function* () {})();
      tracked.forEach((t, i) => {
        stream = this.#wrap(t, i, stream, input, hooks, report, clock, rawCells);
        // A source reads its next batch while the steps after it work on the previous one.
        if (t.step.type === 'source') stream = readAhead(stream, 2);
      });
      for (const t of tracked) {
        t.progress.status = 'running';
        t.started = clock();
        report(t);
      }
      for await (const _ of stream) {
        // The end of the chain. Buffered input resolves without I/O, so without this the whole
        // run could hold the thread; one batch at a time, requests are served in between.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      if (input.signal.aborted) throw new Cancelled();
      for (const write of pending.splice(0)) await write.commit();
    } catch (err) {
      if (err instanceof Cancelled || input.signal.aborted) cancelled = true;
      else if (err instanceof StepFailure) failure = { index: err.index, message: asError(err.failure) };
      else failure = { index: tracked.findIndex((t) => t.step.type === 'load'), message: `commit failed: ${asError(err)}` };
    } finally {
      for (const write of pending.splice(0).reverse()) await write.rollback();
    }

    const failedAt = failure?.index ?? -1;
    tracked.forEach((t, i) => {
      const p = t.progress;
      if (cancelled) {
        if (p.status !== 'succeeded') finish(t, 'skipped', 'cancelled');
        else if (t.step.type === 'load' || t.step.type === 'stage') finish(t, 'succeeded', `${p.message ?? ''} (rolled back: the run was cancelled)`.trim());
      } else if (failure) {
        if (i === failedAt) finish(t, 'failed', failure.message);
        else if (i > failedAt || p.status === 'pending') finish(t, 'skipped', `skipped: ${tracked[failedAt]?.step.name ?? 'a step'} failed`);
        else if (p.status !== 'succeeded') finish(t, 'succeeded', `stopped: ${tracked[failedAt]?.step.name ?? 'a later step'} failed`);
        else if (t.step.type === 'load' || t.step.type === 'stage') finish(t, 'succeeded', `${p.message ?? ''} (rolled back: the run failed)`.trim());
      }
    });
    const steps = tracked.map((t) => ({ ...t.progress }));
    const read = rowsRead();
    const rejected = rowsRejected();
    const status = cancelled ? 'cancelled' : failure ? 'failed' : 'succeeded';
    const failedStep = tracked[failedAt]?.step;
    const error = failure ? `${failedStep ? `step ${failedStep.name} (${failedStep.id}) failed: ` : ''}${failure.message}` : null;
    hooks.onLog(status === 'succeeded' ? 'info' : 'error', `run ${input.runId} ${status}: ${read} read, ${rejected} rejected${error ? `; ${error}` : ''}`);
    return { status, rowsRead: read, rowsWritten: status === 'succeeded' ? read - rejected : 0, rowsRejected: rejected, error, steps };
  }

  #runner(step: RunStep, scope: RunScope, countsUpTo: (id: string) => { read: number; rejected: number }, first: boolean): StepRunner {
    const config = step.config;
    switch (step.type) {
      case 'source':
        return new SourceStep(
          config,
          scope,
          {
            sleep: this.#o.sleep ?? realSleep,
            maxRetries: this.#o.apiMaxRetries,
            backoffBaseMs: this.#o.apiBackoffBaseMs,
            backoffMaxMs: this.#o.apiBackoffMaxMs,
            timeoutMs: this.#o.apiTimeoutMs,
          },
          first,
        );
      case 'transform':
        return new TransformStep(config);
      case 'validate':
        return new ValidateStep(config);
      case 'quality':
        return new QualityStep(config, { tmpDir: scope.tmpDir, quantileMemoryCap: this.#o.quantileMemoryCap });
      case 'db_lookup':
        return new DbLookupStep(config, scope);
      case 'stage':
        return new TableWriteStep('stage', config, scope);
      case 'load':
        return new TableWriteStep('load', config, scope);
      case 'reconcile':
        return new ReconcileStep(config, scope, countsUpTo);
    }
  }

  /** The step's runner over `upstream`, counting rows in and out, tagging its own errors, checking cancel. */
  #wrap(
    t: Tracked,
    index: number,
    upstream: AsyncIterable<Batch>,
    input: EngineInput,
    hooks: { onReject: (r: RejectedRow) => void; onLog: (l: LogLevel, m: string) => void },
    report: (t: Tracked) => void,
    clock: () => number,
    rawCells: RawCells,
  ): AsyncIterable<Batch> {
    const runner = t.runner as StepRunner;
    const p = t.progress;
    const counted = (async function* (): AsyncIterable<Batch> {
      for await (const batch of upstream) {
        if (input.signal.aborted) throw new Cancelled();
        t.passedIn += batch.length;
        yield batch;
      }
    })();
    const ctx: StepContext = {
      step: t.step,
      signal: input.signal,
      reject: (row: Row, reasons: string[]) => {
        p.rowsRejected++;
        hooks.onReject({ step: t.step.id, row: rawCells.materialize(row), reasons });
      },
      log: (level, message) => hooks.onLog(level, `${t.step.name}: ${message}`),
    };
    return (async function* (): AsyncIterable<Batch> {
      try {
        for await (const batch of runner.run(counted, ctx)) {
          if (input.signal.aborted) throw new Cancelled();
          p.rowsIn = t.passedIn + (runner.rowsRead?.() ?? 0);
          p.rowsOut += batch.length;
          report(t);
          yield batch;
        }
        p.rowsIn = t.passedIn + (runner.rowsRead?.() ?? 0);
        p.rowsOut = p.rowsIn - p.rowsRejected;
        report(t);
      } catch (err) {
        if (err instanceof StepFailure || err instanceof Cancelled) throw err;
        if (input.signal.aborted) throw new Cancelled();
        throw new StepFailure(index, err);
      }
      p.status = 'succeeded';
      p.durationMs = Math.max(0, Math.round(clock() - t.started));
      p.message = runner.message?.() ?? null;
      const checks = runner.checks?.();
      if (checks) p.checks = checks;
      report(t);
    })();
  }
}

/**
 * The fields a run's steps read or write, when every step after the first (the source) names
 * them: transform, validate, load and stage. Undefined when any other step runs (quality,
 * db_lookup, reconcile and a second source look at whole rows): no cell then passes raw.
 */
export function fieldsTouched(runners: StepRunner[]): string[] | undefined {
  if (!(runners[0] instanceof SourceStep)) return undefined;
  const fields: string[] = [];
  for (const r of runners.slice(1)) {
    if (r instanceof TransformStep || r instanceof ValidateStep) fields.push(...r.fields);
    else if (!(r instanceof TableWriteStep)) return undefined;
  }
  return fields;
}

/**
 * Pulls up to `depth` batches ahead of the consumer (bounded: memory stays a few batches). Errors
 * surface in order, after the batches read before them.
 */
export async function* readAhead<T>(source: AsyncIterable<T>, depth: number): AsyncIterable<T> {
  const it = source[Symbol.asyncIterator]();
  const queue: Promise<IteratorResult<T>>[] = [];
  let done = false;
  const fill = (): void => {
    while (!done && queue.length < depth) {
      const next = it.next();
      queue.push(next);
      next.then(
        (r) => {
          if (r.done) done = true;
        },
        () => {
          done = true;
        },
      );
      // only one outstanding pull at a time: an async generator queues them anyway
      break;
    }
  };
  try {
    fill();
    while (queue.length > 0) {
      const r = await (queue.shift() as Promise<IteratorResult<T>>);
      if (r.done) return;
      fill();
      yield r.value;
    }
  } finally {
    await it.return?.().catch(() => {});
  }
}

function safe(fn: () => void): void {
  try {
    fn();
  } catch {
    // hooks never throw into the engine
  }
}
