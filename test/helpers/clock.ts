import type { Cancel, Scheduler } from '../../controller/clock.ts';

/** A clock tests move by hand. */
export class FakeClock {
  #now: number;
  constructor(start = '2026-03-01T10:00:00.000Z') {
    this.#now = Date.parse(start);
  }
  now = (): Date => new Date(this.#now);
  advance(ms: number): void {
    this.#now += ms;
  }
}

/** A scheduler whose timers fire only when the test says so; records the delays asked for. */
export class ManualScheduler {
  readonly delays: number[] = [];
  #timers: { fn: () => void; ms: number; cancelled: boolean }[] = [];
  schedule: Scheduler = (fn, ms): Cancel => {
    const t = { fn, ms, cancelled: false };
    this.delays.push(ms);
    this.#timers.push(t);
    return () => {
      t.cancelled = true;
    };
  };
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }
  /** Fires every pending timer once. */
  fireAll(): void {
    const due = this.#timers.filter((t) => !t.cancelled);
    this.#timers = [];
    for (const t of due) t.fn();
  }
}
