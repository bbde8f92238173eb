import { describe, expect, it } from 'vitest';
import { nextFairRun, type Tenant, type WaitingRun } from '../../../controller/runs/fairness.ts';

const run = (runId: string, tenant: Tenant, queuedAt: number): WaitingRun => ({ runId, tenant, queuedAt });
const active = (entries: [Tenant, number][] = []) => new Map<Tenant, number>(entries);

describe('nextFairRun', () => {
  it('answers undefined when nothing waits', () => {
    expect(nextFairRun([], { active: active() })).toBeUndefined();
  });

  it('the tenant with the fewest active runs goes first, with its oldest waiting run', () => {
    const waiting = [run('A1', 'A', 1), run('A2', 'A', 2), run('B1', 'B', 3), run('B2', 'B', 4)];
    expect(nextFairRun(waiting, { active: active([['A', 1]]) })?.runId).toBe('B1');
    expect(nextFairRun(waiting, { active: active([['A', 1], ['B', 2]]) })?.runId).toBe('A1');
  });

  it('among tenants with as many active runs, the one served longest ago (never first), then the oldest waiting run', () => {
    const waiting = [run('A2', 'A', 1), run('A3', 'A', 2), run('B1', 'B', 3), run('C1', 'C', 4)];
    // Nobody served yet: by age.
    expect(nextFairRun(waiting, { active: active() })?.runId).toBe('A2');
    // A was just served: B and C have never been, B's run is older.
    expect(nextFairRun(waiting, { active: active(), lastStarted: new Map([['A', 10]]) })?.runId).toBe('B1');
    expect(nextFairRun(waiting, { active: active(), lastStarted: new Map([['A', 10], ['B', 11]]) })?.runId).toBe('C1');
    expect(nextFairRun(waiting, { active: active(), lastStarted: new Map([['A', 10], ['B', 11], ['C', 12]]) })?.runId).toBe('A2');
  });

  it('unowned pipelines (tenant null) are one tenant of their own', () => {
    const waiting = [run('N1', null, 1), run('N2', null, 2), run('A1', 'A', 3)];
    expect(nextFairRun(waiting, { active: active([[null, 1]]) })?.runId).toBe('A1');
    expect(nextFairRun(waiting, { active: active([['A', 1]]) })?.runId).toBe('N1');
  });

  it('equal queue times keep the input order, within and across tenants', () => {
    const waiting = [run('A1', 'A', 5), run('B1', 'B', 5), run('A2', 'A', 5)];
    expect(nextFairRun(waiting, { active: active() })?.runId).toBe('A1');
    expect(nextFairRun(waiting.slice(1), { active: active() })?.runId).toBe('B1');
  });

  it('a flood drains round-robin: one tenant is served between two runs of another', () => {
    const waiting = [...Array.from({ length: 5 }, (_, i) => run(`A${i}`, 'A', i)), run('B0', 'B', 10), run('B1', 'B', 11), run('C0', 'C', 12)];
    const lastStarted = new Map<Tenant, number>();
    const order: string[] = [];
    for (let seq = 0; waiting.length; seq++) {
      const next = nextFairRun(waiting, { active: active(), lastStarted }) as WaitingRun;
      waiting.splice(waiting.indexOf(next), 1);
      lastStarted.set(next.tenant, seq);
      order.push(next.runId);
    }
    expect(order).toEqual(['A0', 'B0', 'C0', 'A1', 'B1', 'A2', 'A3', 'A4']);
  });
});
