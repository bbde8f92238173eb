import { afterEach, describe, expect, it } from 'vitest';
import { defaultAppliers } from '../../../controller/kinds/index.ts';
import { FakeEngine } from '../../helpers/fake-engine.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';
import { minimalPayload } from '../kinds/pipeline/fixtures.ts';

// The fake clock starts at 2026-03-01T10:00:00Z.
const hourly = (startTime = '10:30') => ({ ...minimalPayload('Hourly'), schedule: { isEnabled: true, frequency: 'hourly', startTime } });

describe('schedules', () => {
  let t: TestRuntime;
  let engine: FakeEngine;
  afterEach(async () => t.close());

  async function setup(payload: Record<string, unknown>, opts: { hold?: boolean } = {}): Promise<string> {
    engine = new FakeEngine(opts);
    t = await makeTestRuntime({ engine });
    t.write('pipelines/p.yaml', manifest('Pipeline', 'p', payload));
    await t.sync();
    await t.rt.runs.schedules.settled();
    return (t.rt.db.prepare('SELECT pipeline_id FROM pipelines').get() as { pipeline_id: string }).pipeline_id;
  }
  const runs = (pipelineId: string) => t.rt.runs.store.list(pipelineId, { limit: 100 });
  /** Moves the clock, fires the timers, waits for the scheduler (and for the runs, unless held). */
  async function tick(ms: number, opts: { held?: boolean } = {}) {
    t.clock.advance(ms);
    t.scheduler.fireAll();
    await t.rt.runs.schedules.settled();
    if (!opts.held) await t.rt.runs.dispatcher.idle();
  }

  it('starts a run with trigger schedule at each nextRunAt, and none before', async () => {
    const id = await setup(hourly());
    await tick(29 * 60_000); // 10:29
    expect(runs(id)).toEqual([]);
    await tick(60_000); // 10:30
    expect(runs(id).map((r) => [r.trigger, r.status, r.queuedAt])).toEqual([['schedule', 'succeeded', '2026-03-01T10:30:00.000Z']]);
    await tick(30 * 60_000); // 11:00
    expect(runs(id)).toHaveLength(1);
    await tick(30 * 60_000); // 11:30
    expect(runs(id)).toHaveLength(2);
  });

  it('cron with seconds fires on the second', async () => {
    const id = await setup({ ...minimalPayload('Cron'), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '15 * * * * *' } });
    await tick(14_000);
    expect(runs(id)).toEqual([]);
    await tick(1000);
    expect(runs(id)).toHaveLength(1);
    await tick(60_000);
    expect(runs(id)).toHaveLength(2);
  });

  it('a fire while a run is active is skipped and creates no run record', async () => {
    const id = await setup(hourly(), { hold: true });
    await tick(30 * 60_000, { held: true }); // 10:30: starts, held
    expect(runs(id).map((r) => r.status)).toEqual(['running']);
    await tick(60 * 60_000, { held: true }); // 11:30, still running
    expect(runs(id)).toHaveLength(1);
    engine.opts.hold = false;
    engine.release(runs(id)[0].runId);
    await t.rt.runs.dispatcher.idle();
    await tick(60 * 60_000); // 12:30: a new run
    expect(runs(id).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
  });

  it('fires missed while the controller was down start ONE run at start, not a backlog', async () => {
    const id = await setup(hourly());
    await tick(30 * 60_000); // 10:30 fires
    expect(runs(id)).toHaveLength(1);
    const dir = t.dir;
    await t.rt.stop();
    // Down for five hours (five fires missed), then back: the runtime's start handles them.
    const later = () => new Date('2026-03-01T15:45:00.000Z');
    const restarted = await makeTestRuntime({ engine, dir, clock: later });
    await restarted.rt.runs.dispatcher.idle();
    t = restarted;
    expect(runs(id).map((r) => r.trigger)).toEqual(['schedule', 'schedule']);
    // The pipeline read shows the next fire and the last run.
    const view = (await import('../../../controller/runs/pipeline-view.ts')).readPipeline(t.rt.db, id, later());
    expect(view?.nextRunAt).toBe('2026-03-01T16:30:00.000Z');
    expect(view?.lastRun?.runId).toBe(runs(id)[0].runId);
  });

  it('a pruned pipeline stops firing and leaves no schedule state', async () => {
    const id = await setup(hourly());
    await tick(30 * 60_000);
    expect(runs(id)).toHaveLength(1);
    t.remove('pipelines/p.yaml');
    await t.sync();
    await t.rt.runs.schedules.settled();
    await tick(3 * 3600_000);
    expect(runs(id)).toHaveLength(1);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM pipeline_schedule_state').get()).toEqual({ n: 0 });
  });

  it('never fires a pipeline more often than BI_SCHEDULE_MIN_INTERVAL, whatever its stored schedule says', async () => {
    // A pipeline stored before the rule: applied by a controller whose minimum was 1 s.
    engine = new FakeEngine();
    t = await makeTestRuntime({ engine, appliers: defaultAppliers({ scheduleMinIntervalMs: 1000 }) });
    t.write('pipelines/p.yaml', manifest('Pipeline', 'p', { ...minimalPayload('Eager'), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '*/10 * * * * *' } }));
    await t.sync();
    await t.rt.runs.schedules.settled();
    const id = (t.rt.db.prepare('SELECT pipeline_id FROM pipelines').get() as { pipeline_id: string }).pipeline_id;
    for (let i = 0; i < 13; i++) await tick(10_000); // 10:00:10 … 10:02:10
    expect(runs(id).map((r) => r.queuedAt).reverse()).toEqual(['2026-03-01T10:00:10.000Z', '2026-03-01T10:01:10.000Z', '2026-03-01T10:02:10.000Z']);
    // The timer after a fire waits out the minimum, not the next 10 s fire.
    expect(t.scheduler.delays.at(-1)).toBe(60_000);
  });

  it('BI_SCHEDULE_MIN_INTERVAL=5s lets a 10 s schedule fire on each fire', async () => {
    engine = new FakeEngine();
    t = await makeTestRuntime({ engine, env: { BI_SCHEDULE_MIN_INTERVAL: '5s' } });
    t.write('pipelines/p.yaml', manifest('Pipeline', 'p', { ...minimalPayload('Eager'), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '*/10 * * * * *' } }));
    await t.sync();
    await t.rt.runs.schedules.settled();
    const id = (t.rt.db.prepare('SELECT pipeline_id FROM pipelines').get() as { pipeline_id: string }).pipeline_id;
    for (let i = 0; i < 6; i++) await tick(10_000);
    expect(runs(id)).toHaveLength(6);
  });

  it('a disabled schedule never fires', async () => {
    const id = await setup({ ...hourly(), schedule: { isEnabled: false, frequency: 'hourly' } });
    await tick(5 * 3600_000);
    expect(runs(id)).toEqual([]);
  });
});
