import type { Clock } from './types.ts';

export const systemClock: Clock = () => new Date();

/** Cancels a scheduled callback. */
export type Cancel = () => void;

/** setTimeout behind a seam, so tests drive retries and debounces without sleeping. */
export type Scheduler = (fn: () => void, ms: number) => Cancel;

export const realScheduler: Scheduler = (fn, ms) => {
  const t = setTimeout(fn, ms);
  t.unref();
  return () => clearTimeout(t);
};
