import { KeyedMutex } from '../mutex.ts';

/**
 * The single writer of the working clone: polls, webhook fetches, API writes and rollbacks run
 * through it one at a time, so none sees another's half-done checkout.
 */
export class WriterLock {
  readonly #mutex = new KeyedMutex();
  #held = 0;

  run<T>(fn: () => Promise<T>): Promise<T> {
    return this.#mutex.run('clone', async () => {
      this.#held++;
      try {
        return await fn();
      } finally {
        this.#held--;
      }
    });
  }

  /** True while a holder runs (assertions in tests). */
  get busy(): boolean {
    return this.#held > 0;
  }
}
