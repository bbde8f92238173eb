import { realScheduler, type Cancel, type Scheduler } from '../clock.ts';

/** What a run of a key answers: the queue schedules the next run from it. */
export interface Retryable {
  /** Run the key again after this many ms (a failure's backoff); null: not until it is added again. */
  retryAfterMs: number | null;
}

export interface WorkQueueOptions<K, R extends Retryable> {
  process(key: K): Promise<R>;
  /** Keys processed at the same time (never the same key twice). */
  concurrency?: number;
  scheduler?: Scheduler;
  /** Monotonic milliseconds (how long a run has been going); performance.now by default. */
  now?: () => number;
}

interface Deferred<R> {
  resolve(result: R | undefined): void;
}

/**
 * A keyed, level-triggered work queue. At most one run per key is in flight; a key added while
 * it runs is run again right after (with whatever is current then). `add` resolves with the
 * result of a run that started after the call (undefined once stopped). Retries are scheduled
 * from each result. Knows nothing of manifests.
 */
export class WorkQueue<K, R extends Retryable> {
  readonly #process: (key: K) => Promise<R>;
  readonly #concurrency: number;
  readonly #scheduler: Scheduler;
  readonly #order: K[] = [];
  readonly #queued = new Set<K>();
  readonly #running = new Set<K>();
  /** When each running key started (monotonic ms): the longest-running item, for metrics. */
  readonly #startedAt = new Map<K, number>();
  readonly #now: () => number;
  readonly #dirty = new Set<K>();
  readonly #nextRun = new Map<K, Deferred<R>[]>();
  readonly #timers = new Map<K, Cancel>();
  readonly #idle: (() => void)[] = [];
  #stopped = false;

  constructor(opts: WorkQueueOptions<K, R>) {
    this.#process = opts.process;
    this.#concurrency = Math.max(1, opts.concurrency ?? 4);
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.#now = opts.now ?? (() => performance.now());
  }

  add(key: K): Promise<R | undefined> {
    if (this.#stopped) return Promise.resolve(undefined);
    const done = new Promise<R | undefined>((resolve) => {
      const list = this.#nextRun.get(key) ?? [];
      list.push({ resolve });
      this.#nextRun.set(key, list);
    });
    if (this.#running.has(key)) this.#dirty.add(key);
    else if (!this.#queued.has(key)) {
      this.#queued.add(key);
      this.#order.push(key);
    }
    this.#pump();
    return done;
  }

  /** Adds `key` after `ms` (a retry); a later call for the same key replaces the timer. */
  addAfter(key: K, ms: number): void {
    this.cancelRetry(key);
    if (this.#stopped) return;
    this.#timers.set(
      key,
      this.#scheduler(() => {
        this.#timers.delete(key);
        void this.add(key);
      }, ms),
    );
  }

  cancelRetry(key: K): void {
    this.#timers.get(key)?.();
    this.#timers.delete(key);
  }

  /** True while `key` waits for a worker or runs (a run of it now would not be the only one), and once stopped. */
  holds(key: K): boolean {
    return this.#stopped || this.#queued.has(key) || this.#running.has(key);
  }

  /**
   * `key` was run outside the queue (a sync's chunk, in one transaction) while the queue did
   * not hold it: its retry is scheduled from `result` as after a run of its own.
   */
  ranOutside(key: K, result: R): void {
    if (result.retryAfterMs === null) this.cancelRetry(key);
    else this.addAfter(key, result.retryAfterMs);
  }

  get size(): number {
    return this.#queued.size + this.#running.size;
  }

  /** Keys waiting for a worker (not yet running). */
  get depth(): number {
    return this.#queued.size;
  }

  /** Keys being processed now. */
  get running(): number {
    return this.#running.size;
  }

  /** How long the oldest run in flight has been going, in ms (0 when none is). */
  get longestRunningMs(): number {
    let oldest = Infinity;
    for (const at of this.#startedAt.values()) oldest = Math.min(oldest, at);
    return oldest === Infinity ? 0 : this.#now() - oldest;
  }

  /** Resolves when nothing is queued or running (scheduled retries do not count). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  stop(): void {
    this.#stopped = true;
    for (const cancel of this.#timers.values()) cancel();
    this.#timers.clear();
  }

  #pump(): void {
    while (this.#running.size < this.#concurrency && this.#order.length > 0) {
      const key = this.#order.shift() as K;
      this.#queued.delete(key);
      this.#running.add(key);
      this.#startedAt.set(key, this.#now());
      const waiters = this.#nextRun.get(key) ?? [];
      this.#nextRun.delete(key);
      void this.#run(key, waiters);
    }
    if (this.size === 0) this.#idle.splice(0).forEach((resolve) => resolve());
  }

  async #run(key: K, waiters: Deferred<R>[]): Promise<void> {
    let result: R | undefined;
    try {
      result = await this.#process(key);
      if (result.retryAfterMs === null) this.cancelRetry(key);
      else this.addAfter(key, result.retryAfterMs);
    } catch {
      // process() reports its own failures; the queue only guarantees progress.
    } finally {
      this.#running.delete(key);
      this.#startedAt.delete(key);
      waiters.forEach((d) => d.resolve(result));
      if (this.#dirty.delete(key) && !this.#stopped) {
        this.#queued.add(key);
        this.#order.push(key);
      } else if (this.#stopped) {
        this.#nextRun.get(key)?.forEach((d) => d.resolve(undefined));
        this.#nextRun.delete(key);
      }
      this.#pump();
    }
  }
}
