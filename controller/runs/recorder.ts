import type { Cancel, Scheduler } from '../clock.ts';
import type { Clock } from '../types.ts';
import { MAX_LOG_LINES, MAX_REJECTS_KEPT, type LogLine, type RunStore } from './store.ts';
import type { LogLevel, RejectedRow, RunHooks, StepProgress } from './types.ts';

/** How often a running run's progress is written (one transaction per flush). */
export const FLUSH_INTERVAL_MS = 250;
/** Past this many buffered rejects or log lines a flush happens at once. */
const FLUSH_AT = 500;

export interface RunRecorderOptions {
  runId: string;
  store: RunStore;
  clock: Clock;
  scheduler: Scheduler;
  /** The run's steps as queued (all pending), in order. */
  steps: StepProgress[];
  /** Called when a flush finds a cancel requested in the store (another process asked). */
  onCancelRequested: () => void;
  /** A failed write (disk full, store locked): the run goes on, the next flush retries. */
  onError: (err: Error) => void;
  /** After each written flush (progress listeners: `bictl run --wait`). */
  onFlushed?: () => void;
}

/**
 * The RunHooks the engine reports to: progress, rejects and log lines are buffered and written
 * in batches — on a timer and when a buffer fills — never one transaction per row. Only the
 * first 1,000 rejects and the log bound are buffered at all; the rest is counted by the engine.
 */
export class RunRecorder implements RunHooks {
  readonly #opts: RunRecorderOptions;
  readonly #steps: Map<string, StepProgress>;
  #stepsDirty = false;
  #rejects: RejectedRow[] = [];
  #logs: LogLine[] = [];
  #rejectsSeen = 0;
  #logsSeen = 0;
  #timer: Cancel | undefined;
  #closed = false;

  constructor(opts: RunRecorderOptions) {
    this.#opts = opts;
    this.#steps = new Map(opts.steps.map((s) => [s.stepId, s]));
  }

  get steps(): StepProgress[] {
    return [...this.#steps.values()];
  }

  onStep(progress: StepProgress): void {
    this.#steps.set(progress.stepId, { ...progress });
    this.#stepsDirty = true;
    this.#arm();
  }

  onReject(rejected: RejectedRow): void {
    if (this.#rejectsSeen++ >= MAX_REJECTS_KEPT) return;
    this.#rejects.push(rejected);
    if (this.#rejects.length >= FLUSH_AT) this.flush();
    else this.#arm();
  }

  onLog(level: LogLevel, message: string): void {
    if (this.#logsSeen++ >= MAX_LOG_LINES) return;
    this.#logs.push({ at: this.#opts.clock().toISOString(), level, message });
    if (this.#logs.length >= FLUSH_AT) this.flush();
    else this.#arm();
  }

  #arm(): void {
    if (this.#timer || this.#closed) return;
    this.#timer = this.#opts.scheduler(() => {
      this.#timer = undefined;
      this.flush();
    }, FLUSH_INTERVAL_MS);
  }

  /** Writes what is buffered; never throws into the engine. */
  flush(): void {
    this.#timer?.();
    this.#timer = undefined;
    if (this.#closed) return;
    const progress = { steps: this.#stepsDirty ? this.steps : undefined, rejects: this.#rejects, logs: this.#logs };
    try {
      const { cancelRequested } = this.#opts.store.record(this.#opts.runId, progress);
      this.#stepsDirty = false;
      this.#rejects = [];
      this.#logs = [];
      this.#opts.onFlushed?.();
      if (cancelRequested) this.#opts.onCancelRequested();
    } catch (err) {
      this.#opts.onError(err as Error);
    }
  }

  /** The last flush; later reports are dropped (the run's end is written by `finish`). */
  close(): void {
    this.flush();
    this.#closed = true;
  }
}
