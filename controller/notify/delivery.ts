import { realScheduler, type Scheduler } from '../clock.ts';
import { backoffDelay, type BackoffPolicy } from '../lib/backoff.ts';
import { EgressDeniedError } from '../runs/engine/egress.ts';
import type { EgressPolicy } from '../runs/types.ts';

/** One message for one Notifier. */
export interface Delivery {
  notifier: string;
  event: string;
  url: string;
  body: string;
  headers: Record<string, string>;
}

export type DeliveryResult = 'delivered' | 'retrying' | 'failed';

/** What one POST answered: a status code, or the network error. */
export type Post = (url: string, init: { body: string; headers: Record<string, string>; timeoutMs: number }) => Promise<number>;

export interface DeliveryQueueOptions {
  /** Attempts in all before a message is given up. */
  attempts?: number;
  backoff?: BackoffPolicy;
  random?: () => number;
  scheduler?: Scheduler;
  timeoutMs?: number;
  /** Messages kept waiting per Notifier; beyond, the oldest is given up. */
  maxQueued?: number;
  /** Where a notification may go (the pipelines' rules: never link-local, never the controller itself). */
  egress?: EgressPolicy;
  post?: Post;
  /** Told each attempt's outcome (delivery state, metrics); must not throw. */
  onAttempt(d: Delivery, result: DeliveryResult, error: string | null): void;
}

/** 1 s doubling to 1 min: a receiver that is down for a minute still gets its messages, in order. */
export const DELIVERY_BACKOFF: BackoffPolicy = { baseMs: 1000, maxMs: 60_000, jitter: 0.2 };

/** A refusal no retry can fix (a 4xx other than 408/429, a forbidden address). */
class Permanent extends Error {}

const fetchPost: Post = async (url, init) => {
  const res = await fetch(url, { method: 'POST', body: init.body, headers: init.headers, redirect: 'manual', signal: AbortSignal.timeout(init.timeoutMs) });
  await res.body?.cancel();
  return res.status;
};

/**
 * Sends notifications off the reconcile loop: one FIFO per Notifier (a failure and its recovery
 * arrive in that order), one message in flight per Notifier, retries on network errors, 408,
 * 429 and 5xx with capped exponential backoff on the injected scheduler. `enqueue` never waits.
 */
export class DeliveryQueue {
  readonly #o: Required<Omit<DeliveryQueueOptions, 'egress'>> & Pick<DeliveryQueueOptions, 'egress'>;
  readonly #queues = new Map<string, { items: Delivery[]; attempt: number; busy: boolean }>();
  readonly #idle: (() => void)[] = [];
  #inFlight = 0;
  #stopped = false;
  readonly #timers = new Set<() => void>();

  constructor(opts: DeliveryQueueOptions) {
    this.#o = {
      attempts: opts.attempts ?? 5,
      backoff: opts.backoff ?? DELIVERY_BACKOFF,
      random: opts.random ?? Math.random,
      scheduler: opts.scheduler ?? realScheduler,
      timeoutMs: opts.timeoutMs ?? 10_000,
      maxQueued: opts.maxQueued ?? 1000,
      egress: opts.egress,
      post: opts.post ?? fetchPost,
      onAttempt: opts.onAttempt,
    };
  }

  /** Messages waiting or being sent (retries included). */
  get depth(): number {
    let n = 0;
    for (const q of this.#queues.values()) n += q.items.length;
    return n;
  }

  enqueue(d: Delivery): void {
    if (this.#stopped) return;
    const q = this.#queues.get(d.notifier) ?? { items: [], attempt: 0, busy: false };
    this.#queues.set(d.notifier, q);
    q.items.push(d);
    if (q.items.length > this.#o.maxQueued) {
      const dropped = q.items.splice(1, 1)[0];
      if (dropped) this.#o.onAttempt(dropped, 'failed', `more than ${this.#o.maxQueued} messages waiting: the oldest was dropped`);
    }
    this.#next(d.notifier);
  }

  /** Resolves when no attempt is in flight (scheduled retries do not count). */
  idle(): Promise<void> {
    if (this.#inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  stop(): void {
    this.#stopped = true;
    for (const cancel of this.#timers) cancel();
    this.#timers.clear();
  }

  #next(name: string): void {
    const q = this.#queues.get(name);
    if (!q || q.busy || this.#stopped) return;
    const head = q.items[0];
    if (!head) {
      this.#queues.delete(name);
      return;
    }
    q.busy = true;
    this.#inFlight++;
    void this.#attempt(head)
      .then((error) => {
        q.attempt++;
        const done = error === null || error instanceof Permanent || q.attempt >= this.#o.attempts;
        this.#o.onAttempt(head, error === null ? 'delivered' : done ? 'failed' : 'retrying', error?.message ?? null);
        if (done) {
          q.items.shift();
          q.attempt = 0;
          q.busy = false;
          this.#next(name);
          return;
        }
        const cancel = this.#o.scheduler(() => {
          this.#timers.delete(cancel);
          q.busy = false;
          this.#next(name);
        }, backoffDelay(q.attempt, this.#o.backoff, this.#o.random));
        this.#timers.add(cancel);
      })
      .finally(() => {
        if (--this.#inFlight === 0) this.#idle.splice(0).forEach((resolve) => resolve());
      });
  }

  /** One POST; null when delivered, else why not. */
  async #attempt(d: Delivery): Promise<Error | null> {
    try {
      const url = new URL(d.url);
      await this.#o.egress?.check(url.hostname, Number(url.port || (url.protocol === 'https:' ? 443 : 80)));
      const status = await this.#o.post(d.url, { body: d.body, headers: d.headers, timeoutMs: this.#o.timeoutMs });
      if (status >= 200 && status < 300) return null;
      const message = `the receiver answered ${status}`;
      return status === 408 || status === 429 || status >= 500 ? new Error(message) : new Permanent(message);
    } catch (err) {
      if (err instanceof EgressDeniedError) return new Permanent(err.message);
      return err instanceof Error ? err : new Error(String(err));
    }
  }
}
