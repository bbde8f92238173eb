import { realScheduler, type Cancel, type Scheduler } from '../clock.ts';

export interface WorkQueueOptions<K> {
  process(key: K): Promise<void>;
  /** Keys processed at the same time (never the same key twice). */
  concurrency?: number;
  scheduler?: Scheduler;
}

interface Deferred {
  resolve(): void;
}

/**
 * A keyed, level-triggered work queue. At most one run per key is in flight; a key added while
 * it runs is run again right after (with whatever is current then). `add` resolves when a run
 * that started after the call has finished. Knows nothing of manifests.
 */
export class WorkQueue<K> {
  readonly #process: (key: K) => Promise<void>;
  readonly #concurrency: number;
  readonly #scheduler: Scheduler;
  readonly #order: K[] = [];
  readonly #queued = new Set<K>();
  readonly #running = new Set<K>();
  readonly #dirty = new Set<K>();
  readonly #nextRun = new Map<K, Deferred[]>();
  readonly #timers = new Map<K, Cancel>();
  readonly #idle: Deferred[] = [];
  #stopped = false;

  constructor(opts: WorkQueueOptions<K>) {
    this.#process = opts.process;
    this.#concurrency = Math.max(1, opts.concurrency ?? 4);
    this.#scheduler = opts.scheduler ?? realScheduler;
  }

  add(key: K): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    const done = new Promise<void>((resolve) => {
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

  get size(): number {
    return this.#queued.size + this.#running.size;
  }

  /** Resolves when nothing is queued or running (scheduled retries do not count). */
  idle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push({ resolve }));
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
      const waiters = this.#nextRun.get(key) ?? [];
      this.#nextRun.delete(key);
      void this.#run(key, waiters);
    }
    if (this.size === 0) this.#idle.splice(0).forEach((d) => d.resolve());
  }

  async #run(key: K, waiters: Deferred[]): Promise<void> {
    try {
      await this.#process(key);
    } catch {
      // process() reports its own failures; the queue only guarantees progress.
    } finally {
      this.#running.delete(key);
      waiters.forEach((d) => d.resolve());
      if (this.#dirty.delete(key) && !this.#stopped) {
        this.#queued.add(key);
        this.#order.push(key);
      } else if (this.#stopped) {
        this.#nextRun.get(key)?.forEach((d) => d.resolve());
        this.#nextRun.delete(key);
      }
      this.#pump();
    }
  }
}
