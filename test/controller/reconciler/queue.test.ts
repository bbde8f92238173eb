import { describe, expect, it } from 'vitest';
import { backoffDelay, DEFAULT_BACKOFF } from '../../../controller/lib/backoff.ts';
import { WorkQueue } from '../../../controller/reconciler/queue.ts';
import { ManualScheduler } from '../../helpers/clock.ts';

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('WorkQueue', () => {
  it('never runs one key twice at the same time, and runs it again when added meanwhile', async () => {
    const gates: { resolve: () => void }[] = [];
    let running = 0;
    let maxRunning = 0;
    let runs = 0;
    const q = new WorkQueue<string, { retryAfterMs: null }>({
      concurrency: 4,
      process: async () => {
        running++;
        runs++;
        maxRunning = Math.max(maxRunning, running);
        const d = deferred();
        gates.push(d);
        await d.promise;
        running--;
        return { retryAfterMs: null };
      },
    });
    const first = q.add('k');
    await Promise.resolve();
    const second = q.add('k'); // while running: marks it dirty
    const third = q.add('k'); // coalesced with the second
    expect(gates).toHaveLength(1);
    gates[0].resolve();
    await first;
    await new Promise((r) => setImmediate(r));
    expect(gates).toHaveLength(2);
    gates[1].resolve();
    await Promise.all([second, third]);
    expect(runs).toBe(2);
    expect(maxRunning).toBe(1);
  });

  it('runs different keys in parallel up to the concurrency', async () => {
    const gates: { resolve: () => void }[] = [];
    const q = new WorkQueue<string, { retryAfterMs: null }>({
      concurrency: 2,
      process: async () => {
        const d = deferred();
        gates.push(d);
        await d.promise;
        return { retryAfterMs: null };
      },
    });
    const all = ['a', 'b', 'c'].map((k) => q.add(k));
    await Promise.resolve();
    expect(gates).toHaveLength(2);
    gates.forEach((g) => g.resolve());
    await new Promise((r) => setImmediate(r));
    expect(gates).toHaveLength(3);
    gates[2].resolve();
    await Promise.all(all);
    await q.idle();
    expect(q.size).toBe(0);
  });

  it('keeps going after a process that throws', async () => {
    let calls = 0;
    const q = new WorkQueue<string, { retryAfterMs: null }>({
      process: async () => {
        calls++;
        throw new Error('boom');
      },
    });
    await q.add('x');
    await q.add('x');
    expect(calls).toBe(2);
  });

  it('schedules retries through the injected scheduler and replaces an earlier timer', async () => {
    const s = new ManualScheduler();
    const seen: string[] = [];
    const q = new WorkQueue<string, { retryAfterMs: null }>({ scheduler: s.schedule, process: async (k) => {
        seen.push(k);
        return { retryAfterMs: null };
      },
    });
    q.addAfter('k', 1000);
    q.addAfter('k', 2000);
    expect(s.delays).toEqual([1000, 2000]);
    expect(s.pending).toBe(1);
    s.fireAll();
    await q.idle();
    expect(seen).toEqual(['k']);
  });
});

describe('WorkQueue results', () => {
  it('answers each caller with the result of a run that started after its call, and schedules the retry the result asks for', async () => {
    const s = new ManualScheduler();
    const results = [{ n: 1, retryAfterMs: 4000 as number | null }, { n: 2, retryAfterMs: null }];
    let run = 0;
    const q = new WorkQueue<string, { n: number; retryAfterMs: number | null }>({ scheduler: s.schedule, process: async () => results[run++] });
    expect(await q.add('k')).toEqual({ n: 1, retryAfterMs: 4000 });
    expect(s.delays).toEqual([4000]);
    expect(s.pending).toBe(1);
    s.fireAll();
    await q.idle();
    expect(run).toBe(2);
    // The second result asked for no retry: nothing is scheduled.
    expect(s.pending).toBe(0);
  });

  it('answers undefined once stopped', async () => {
    const q = new WorkQueue<string, { retryAfterMs: null }>({ process: async () => ({ retryAfterMs: null }) });
    q.stop();
    expect(await q.add('k')).toBeUndefined();
  });
});

describe('backoffDelay', () => {
  it('doubles from 1 s and caps at 5 min', () => {
    const exact = () => 0;
    expect([1, 2, 3, 4].map((n) => backoffDelay(n, DEFAULT_BACKOFF, exact))).toEqual([1000, 2000, 4000, 8000]);
    expect(backoffDelay(9, DEFAULT_BACKOFF, exact)).toBe(256_000);
    expect(backoffDelay(10, DEFAULT_BACKOFF, exact)).toBe(300_000);
    expect(backoffDelay(50, DEFAULT_BACKOFF, exact)).toBe(300_000);
  });

  it('jitters downward only, within the policy', () => {
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 1)).toBe(3200);
    expect(backoffDelay(3, DEFAULT_BACKOFF, () => 0.5)).toBe(3600);
  });

  it('reports its depth, the keys running and how long the oldest run has been going', async () => {
    let now = 1000;
    const gates = new Map<string, () => void>();
    const q = new WorkQueue<string, { retryAfterMs: null }>({
      concurrency: 2,
      now: () => now,
      process: (key) =>
        new Promise((resolve) => {
          gates.set(key, () => resolve({ retryAfterMs: null }));
        }),
    });
    expect([q.depth, q.running, q.longestRunningMs]).toEqual([0, 0, 0]);
    const a = q.add('a');
    now = 1500;
    const b = q.add('b');
    const c = q.add('c');
    now = 4000;
    expect([q.depth, q.running, q.longestRunningMs]).toEqual([1, 2, 3000]);
    gates.get('a')?.();
    await a;
    await Promise.resolve();
    expect([q.depth, q.running, q.longestRunningMs]).toEqual([0, 2, 2500]);
    gates.get('b')?.();
    await b;
    gates.get('c')?.();
    await c;
    await q.idle();
    expect([q.depth, q.running, q.longestRunningMs]).toEqual([0, 0, 0]);
  });
});
