import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../controller/log.ts';
import { RETENTION_INTERVAL_MS, RunRetention } from '../../../controller/runs/retention.ts';
import { RunStore } from '../../../controller/runs/store.ts';
import type { StepProgress } from '../../../controller/runs/types.ts';
import { openStore, type Store } from '../../../controller/store/db.ts';
import { FakeClock, ManualScheduler } from '../../helpers/clock.ts';
import { makeTestRuntime } from '../../helpers/runtime.ts';

const DAY = 86_400_000;
const step: StepProgress = { stepId: 'step-1-0', type: 'source', name: 'Source', status: 'succeeded', rowsIn: 0, rowsOut: 1, rowsRejected: 0, durationMs: 1, message: null };

describe('RunRetention', () => {
  let dir: string;
  let db: Store;
  let clock: FakeClock;
  let scheduler: ManualScheduler;
  let store: RunStore;
  let pauses: number;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-retention-'));
    db = openStore(join(dir, 'bi.sqlite'));
    clock = new FakeClock();
    scheduler = new ManualScheduler();
    store = new RunStore({ db, clock: clock.now });
    pauses = 0;
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const retention = (retentionMs = 30 * DAY) =>
    new RunRetention({ db, clock: clock.now, scheduler: scheduler.schedule, log: silentLogger(), retentionMs, pause: async () => void pauses++ });

  /** `n` ended runs of `pipelineId`, one a day (the clock moves on), each with two log lines and a reject. */
  function runs(pipelineId: string, n: number, status: 'succeeded' | 'failed' = 'succeeded'): string[] {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const run = store.create({ pipelineId, trigger: 'schedule', actor: null, owner: 'h:1', steps: [step] });
      store.markRunning(run.runId, 'h:1');
      store.record(run.runId, {
        logs: [{ at: clock.now().toISOString(), level: 'info', message: 'one' }, { at: clock.now().toISOString(), level: 'info', message: 'two' }],
        rejects: [{ step: 'step-1-1', row: { id: i }, reasons: ['bad'] }],
      });
      store.finish(run.runId, { status, rowsRead: 1, rowsWritten: 1, rowsRejected: 1, error: null, steps: [step] });
      ids.push(run.runId);
      clock.advance(DAY);
    }
    return ids;
  }
  const left = (pipelineId: string) => store.list(pipelineId, { limit: 10_000 }).map((r) => r.runId).reverse();
  const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

  it('deletes ended runs older than the retention with their logs and rejects, keeping the last 20 of each pipeline', async () => {
    const a = runs('DP-A', 60); // one a day: days 0..59
    const b = runs('DP-B', 25); // days 60..84, all older than 30 days by day 120
    const c = runs('DP-C', 5); // days 85..89
    clock.advance(30 * DAY); // now = day 120: the cutoff is day 90
    const result = await retention().sweep();
    expect(left('DP-A')).toEqual(a.slice(40));
    expect(left('DP-B')).toEqual(b.slice(5));
    expect(left('DP-C')).toEqual(c);
    expect(result).toMatchObject({ runs: 45, logs: 90, rejects: 45 });
    expect(count('pipeline_runs')).toBe(45);
    expect(count('pipeline_run_logs')).toBe(90);
    expect(count('pipeline_run_rejects')).toBe(45);
  });

  it('keeps runs younger than the retention beyond the last 20, and never touches queued or running runs', async () => {
    const a = runs('DP-A', 40); // days 0..39; now day 40
    clock.advance(-5 * DAY); // now = day 35: the cutoff (30 days) is day 5
    const queued = store.create({ pipelineId: 'DP-Q', trigger: 'api', actor: null, owner: 'h:1', steps: [step] });
    // A run started long ago and still running.
    clock.advance(-100 * DAY);
    const running = store.create({ pipelineId: 'DP-R', trigger: 'api', actor: null, owner: 'h:1', steps: [step] });
    store.markRunning(running.runId, 'h:1');
    clock.advance(100 * DAY);
    await retention().sweep();
    expect(left('DP-A')).toEqual(a.slice(5)); // those that ended on days 0..4
    expect(store.get(queued.runId)?.status).toBe('queued');
    expect(store.get(running.runId)?.status).toBe('running');
  });

  it('keeps the last 20 runs of a removed pipeline too', async () => {
    const gone = runs('DP-GONE', 30);
    clock.advance(365 * DAY);
    await retention().sweep();
    expect(left('DP-GONE')).toEqual(gone.slice(10));
  });

  it('deletes in bounded batches and lets the event loop run between them', async () => {
    runs('DP-A', 320);
    clock.advance(60 * DAY);
    const result = await retention().sweep();
    expect(result.runs).toBe(300);
    expect(result.batches).toBe(6); // 50 runs a batch
    expect(pauses).toBeGreaterThanOrEqual(5);
  });

  it('bounds a batch by rows too: runs with many log lines and rejects go fewer at a time', async () => {
    for (let i = 0; i < 12; i++) {
      const run = store.create({ pipelineId: 'DP-BIG', trigger: 'api', actor: null, owner: 'h:1', steps: [step] });
      const at = clock.now().toISOString();
      store.record(run.runId, {
        logs: Array.from({ length: 1000 }, (_, k) => ({ at, level: 'info' as const, message: `line ${k}` })),
        rejects: Array.from({ length: 1000 }, (_, k) => ({ step: 'step-1-1', row: { k }, reasons: ['bad'] })),
      });
      store.finish(run.runId, { status: 'failed', rowsRead: 0, rowsWritten: 0, rowsRejected: 1000, error: 'x', steps: [step] });
      clock.advance(DAY);
    }
    clock.advance(60 * DAY);
    const result = await retention().sweep();
    // No pipeline keeps fewer than 20: nothing to delete here (12 runs).
    expect(result.runs).toBe(0);
    const small = await new RunRetention({ db, clock: clock.now, scheduler: scheduler.schedule, log: silentLogger(), retentionMs: DAY, keepPerPipeline: 2, pause: async () => undefined }).sweep();
    // 10 runs of 2,001 rows each: a batch ends once it reaches 1,000 rows, after one run.
    expect(small).toEqual({ runs: 10, logs: 10_000, rejects: 10_000, batches: 10 });
  });

  it('sweeps at start, then every hour, on the injected timer', async () => {
    const a = runs('DP-A', 25); // days 0..24, now day 25
    clock.advance(30 * DAY); // day 55: the cutoff is day 25: 5 runs past the last 20 are old
    const r = retention();
    r.start();
    await r.settled();
    await Promise.resolve();
    expect(left('DP-A')).toEqual(a.slice(5));
    expect(scheduler.delays).toEqual([RETENTION_INTERVAL_MS]);
    const more = runs('DP-A', 3); // three more: three old ones fall out of the last 20
    scheduler.fireAll();
    await r.settled();
    expect(left('DP-A')).toEqual([...a.slice(8), ...more]);
    r.stop();
    expect(scheduler.pending).toBe(0);
  });
});

describe('run retention in the runtime', () => {
  it('reads BI_RUN_RETENTION and sweeps when the runs start', async () => {
    let t = await makeTestRuntime({ env: { BI_RUN_RETENTION: '1d' } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 21; i++) {
        const run = t.rt.runs.store.create({ pipelineId: 'DP-1', trigger: 'api', actor: null, owner: 'h:1', steps: [] });
        t.rt.runs.store.finish(run.runId, { status: 'succeeded', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error: null, steps: [] });
        ids.push(run.runId);
      }
      await t.rt.stop();
      // Back two days later: the start sweeps the one run past the last 20.
      t = await makeTestRuntime({ env: { BI_RUN_RETENTION: '1d' }, dir: t.dir, clock: () => new Date('2026-03-03T10:00:00.000Z') });
      await t.rt.runs.retention.settled();
      expect(t.rt.runs.store.get(ids[0])).toBeUndefined();
      expect(t.rt.runs.store.list('DP-1', { limit: 100 })).toHaveLength(20);
    } finally {
      await t.close();
    }
  });
});
