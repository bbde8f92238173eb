import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../../controller/store/db.ts';
import { ActiveRunError, MAX_LOG_LINES, MAX_REJECTS_KEPT, RunStore } from '../../../controller/runs/store.ts';
import type { StepProgress } from '../../../controller/runs/types.ts';
import { FakeClock } from '../../helpers/clock.ts';

const step: StepProgress = { stepId: 'step-1-0', type: 'source', name: 'Source', status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null };

describe('RunStore', () => {
  let dir: string;
  let db: Store;
  let clock: FakeClock;
  let store: RunStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-runs-'));
    db = openStore(join(dir, 'bi.sqlite'));
    clock = new FakeClock();
    store = new RunStore({ db, clock: clock.now });
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const create = (pipelineId = 'DP-1', s: RunStore = store) => s.create({ pipelineId, trigger: 'api', actor: 'U1', owner: 'h:1', steps: [step] });

  it('issues RUN-<digits> IDs, unique in a burst within one millisecond and after a reopen', () => {
    const ids = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const run = create(`DP-${i}`);
      expect(run.runId).toMatch(/^RUN-\d+$/);
      ids.add(run.runId);
    }
    db.close();
    db = openStore(join(dir, 'bi.sqlite'));
    const reopened = new RunStore({ db, clock: clock.now });
    for (let i = 0; i < 5; i++) ids.add(create(`DP-x${i}`, reopened).runId);
    expect(ids.size).toBe(55);
  });

  it('keeps one active run per pipeline, also against a second connection that skips the check', () => {
    const run = create();
    expect(() => create()).toThrow(ActiveRunError);
    const other = openStore(join(dir, 'bi.sqlite'));
    try {
      // Another process inserting directly still meets the partial unique index.
      expect(() =>
        other
          .prepare("INSERT INTO pipeline_runs (run_id, stamp, pipeline_id, status, trigger, queued_at) VALUES ('RUN-9', 9, 'DP-1', 'running', 'cli', 'x')")
          .run(),
      ).toThrow(/UNIQUE/);
    } finally {
      other.close();
    }
    expect(store.cancelQueued(run.runId)).toBe(true);
    expect(store.get(run.runId)).toMatchObject({ status: 'cancelled', steps: [{ ...step, status: 'skipped' }] });
    expect(create().status).toBe('queued');
  });

  it('keeps the first 1,000 rejects and the first log lines of a run', () => {
    const run = create();
    const rejects = Array.from({ length: 700 }, (_, i) => ({ step: 'step-1-0', row: { i }, reasons: ['bad'] }));
    store.record(run.runId, { rejects, logs: Array.from({ length: 600 }, (_, i) => ({ at: 'x', level: 'info' as const, message: `l${i}` })) });
    store.record(run.runId, { rejects, logs: Array.from({ length: 600 }, (_, i) => ({ at: 'x', level: 'info' as const, message: `m${i}` })) });
    const kept = store.rejects(run.runId, 5000);
    expect(kept).toHaveLength(MAX_REJECTS_KEPT);
    expect(kept[999]).toEqual({ step: 'step-1-0', row: { i: 299 }, reasons: ['bad'] });
    expect(store.logs(run.runId, 5000)).toHaveLength(MAX_LOG_LINES);
    expect(store.rejects(run.runId, 2)).toHaveLength(2);
  });

  it('fails runs whose process is gone with an interrupted error, leaves those of live processes', () => {
    const gone = create('DP-1');
    store.markRunning(gone.runId, 'h:dead');
    const queued = create('DP-2');
    const alive = create('DP-3');
    store.markRunning(alive.runId, 'h:alive');
    const failed = store.failInterrupted((owner) => owner === 'h:alive');
    expect(failed.sort()).toEqual([gone.runId, queued.runId].sort());
    expect(store.get(gone.runId)).toMatchObject({ status: 'failed', error: 'interrupted: the controller stopped while the run was running' });
    expect(store.get(queued.runId)).toMatchObject({ status: 'failed', error: 'interrupted: the controller stopped while the run was queued' });
    expect(store.get(alive.runId)?.status).toBe('running');
  });
});
