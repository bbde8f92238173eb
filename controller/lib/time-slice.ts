import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * Cooperative time slicing for long synchronous work (a 10,000-file sync): `tick()` gives the
 * event loop a turn once `budgetMs` went by since the last one, so HTTP (`/healthz`) keeps
 * answering. A turn costs a few microseconds; checking the clock less.
 */
export class TimeSlice {
  readonly #budgetMs: number;
  readonly #now: () => number;
  #since: number;

  constructor(budgetMs: number, now: () => number = () => performance.now()) {
    this.#budgetMs = budgetMs;
    this.#now = now;
    this.#since = now();
  }

  async tick(): Promise<void> {
    if (this.#now() - this.#since < this.#budgetMs) return;
    await nextTurn();
    this.#since = this.#now();
  }
}
