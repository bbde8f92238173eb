/** Capped exponential backoff: 1 s doubling to 5 min by default, with downward jitter. */
export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
  /** Fraction (0..1) of the delay that jitter may take off, so retries of many keys spread out. */
  jitter: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1000, maxMs: 5 * 60 * 1000, jitter: 0.2 };

/** Delay before retry number `attempt` (1-based). With `random` returning 0 the sequence is exact. */
export function backoffDelay(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exp = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (1 - policy.jitter * random()));
}
