import type { Clock } from '../types.ts';

/** Outcome of asking a limiter: allowed, or refused with the seconds to wait (for `Retry-After`). */
export type Admission = { ok: true } | { ok: false; retryAfterSeconds: number };

/**
 * A token bucket per key: `ratePerSecond` tokens refill continuously up to `burst`.
 * Used for the per-API-key request limit; the clock is injected so tests drive time.
 */
export class TokenBuckets {
  readonly #rate: number;
  readonly #burst: number;
  readonly #clock: Clock;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();
  readonly #maxKeys: number;

  constructor(opts: { ratePerSecond: number; burst?: number; clock: Clock; maxKeys?: number }) {
    this.#rate = opts.ratePerSecond;
    this.#burst = opts.burst ?? opts.ratePerSecond;
    this.#clock = opts.clock;
    this.#maxKeys = opts.maxKeys ?? 100_000;
  }

  /** Takes one token for `key`. A rate of 0 or less means unlimited. */
  take(key: string): Admission {
    if (this.#rate <= 0) return { ok: true };
    const now = this.#clock().getTime();
    let b = this.#buckets.get(key);
    if (!b) {
      if (this.#buckets.size >= this.#maxKeys) this.#buckets.clear();
      b = { tokens: this.#burst, at: now };
      this.#buckets.set(key, b);
    }
    b.tokens = Math.min(this.#burst, b.tokens + ((now - b.at) / 1000) * this.#rate);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - b.tokens) / this.#rate)) };
  }

  forget(key: string): void {
    this.#buckets.delete(key);
  }
}

/**
 * At most `limit` events per key in a fixed window of `windowMs`: the login limiter counts
 * failed attempts per IP and per username.
 */
export class WindowCounter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #clock: Clock;
  readonly #windows = new Map<string, { count: number; resetAt: number }>();
  readonly #maxKeys: number;

  constructor(opts: { limit: number; windowMs: number; clock: Clock; maxKeys?: number }) {
    this.#limit = opts.limit;
    this.#windowMs = opts.windowMs;
    this.#clock = opts.clock;
    this.#maxKeys = opts.maxKeys ?? 100_000;
  }

  /** Whether another attempt is allowed now (does not count one). */
  check(key: string): Admission {
    const w = this.#current(key);
    if (!w || w.count < this.#limit) return { ok: true };
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((w.resetAt - this.#clock().getTime()) / 1000)) };
  }

  /**
   * Checks and counts one attempt in one step: under concurrency every attempt past the limit
   * is refused, however many are in flight. `release` takes back an attempt that did not fail.
   */
  reserve(key: string): Admission {
    const admission = this.check(key);
    if (admission.ok) this.record(key);
    return admission;
  }

  /** Takes back one reserved attempt (it succeeded, or was never tried). */
  release(key: string): void {
    const w = this.#current(key);
    if (!w) return;
    w.count -= 1;
    if (w.count <= 0) this.#windows.delete(key);
  }

  record(key: string): void {
    const now = this.#clock().getTime();
    const w = this.#current(key);
    if (w) {
      w.count += 1;
      return;
    }
    if (this.#windows.size >= this.#maxKeys) this.#prune(now);
    this.#windows.set(key, { count: 1, resetAt: now + this.#windowMs });
  }

  reset(key: string): void {
    this.#windows.delete(key);
  }

  #current(key: string): { count: number; resetAt: number } | undefined {
    const w = this.#windows.get(key);
    if (w && w.resetAt <= this.#clock().getTime()) {
      this.#windows.delete(key);
      return undefined;
    }
    return w;
  }

  #prune(now: number): void {
    for (const [k, w] of this.#windows) if (w.resetAt <= now) this.#windows.delete(k);
    if (this.#windows.size >= this.#maxKeys) this.#windows.clear();
  }
}
