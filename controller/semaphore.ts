/**
 * At most `limit` tasks at once, at most `maxQueue` waiting; a task beyond both is refused at
 * once rather than queued without bound (password hashes: a login storm must not take every
 * thread of libuv's pool from file and store writes, nor pile up memory).
 */
export class Semaphore {
  readonly #limit: number;
  readonly #maxQueue: number;
  readonly #waiting: (() => void)[] = [];
  #running = 0;

  constructor(opts: { limit: number; maxQueue: number }) {
    if (!Number.isInteger(opts.limit) || opts.limit < 1) throw new Error(`Semaphore limit must be a positive integer, got ${opts.limit}`);
    this.#limit = opts.limit;
    this.#maxQueue = Math.max(0, opts.maxQueue);
  }

  /** Whether a task asked for now would be admitted (run or queued). */
  get hasRoom(): boolean {
    return this.#running < this.#limit || this.#waiting.length < this.#maxQueue;
  }

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#waiting.length;
  }

  /** Runs `fn` when a slot is free; `undefined` (nothing run) when the queue is full too. */
  tryRun<T>(fn: () => Promise<T>): Promise<T> | undefined {
    if (!this.hasRoom) return undefined;
    return this.#acquire().then(async () => {
      try {
        return await fn();
      } finally {
        this.#release();
      }
    });
  }

  #acquire(): Promise<void> {
    if (this.#running < this.#limit) {
      this.#running += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#running -= 1;
  }
}
