import { afterEach, describe, expect, it, vi } from 'vitest';
import { LocalRunDispatcher, ownerAlive, processOwner } from '../../../controller/runs/dispatcher.ts';
import { RunStore } from '../../../controller/runs/store.ts';
import { silentLogger } from '../../../controller/log.ts';
import { FakeEngine } from '../../helpers/fake-engine.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';
import { minimalPayload } from '../kinds/pipeline/fixtures.ts';

describe('LocalRunDispatcher', () => {
  let t: TestRuntime;
  afterEach(async () => t.close());

  async function setup(engine: FakeEngine, pipelines = ['a', 'b', 'c']): Promise<string[]> {
    t = await makeTestRuntime({ engine });
    for (const name of pipelines) t.write(`pipelines/${name}.yaml`, manifest('Pipeline', name, minimalPayload(name)));
    await t.sync();
    return pipelines.map((name) => (t.rt.db.prepare('SELECT pipeline_id FROM pipelines WHERE manifest_key = ?').get(`Pipeline/${name}`) as { pipeline_id: string }).pipeline_id);
  }

  function dispatcher(engine: FakeEngine, concurrency: number): LocalRunDispatcher {
    const { rt } = t;
    return new LocalRunDispatcher({
      db: rt.db,
      store: rt.runs.store,
      engine,
      clock: rt.clock,
      scheduler: t.scheduler.schedule,
      log: silentLogger(),
      concurrency,
      connections: () => ({ resolve: () => ({ connectionId: 'x', vendor: 'POSTGRESQL' }) }),
      egress: { check: async () => undefined, endpoint: async () => [] },
      filesDir: t.dir,
    });
  }

  it('runs at most BI_RUN_CONCURRENCY at once; the others wait queued, first come first served', async () => {
    const engine = new FakeEngine({ hold: true });
    const [a, b, c] = await setup(engine);
    const d = dispatcher(engine, 2);
    const runs = [await d.start(a, 'api', null), await d.start(b, 'api', null), await d.start(c, 'cli', null)];
    expect(runs.map((r) => r.status)).toEqual(['running', 'running', 'queued']);
    expect(engine.inputs.map((i) => i.runId)).toEqual([runs[0].runId, runs[1].runId]);
    engine.release(runs[1].runId);
    await d.wait(runs[1].runId);
    await engine.started(runs[2].runId);
    expect(t.rt.runs.store.get(runs[2].runId)?.status).toBe('running');
    engine.release(runs[0].runId);
    engine.release(runs[2].runId);
    await d.idle();
    expect(runs.map((r) => t.rt.runs.store.get(r.runId)?.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
  });

  for (const concurrency of [1, 2]) {
    it(`a tenant's flood delays another tenant's run by at most one run (concurrency ${concurrency})`, async () => {
      const engine = new FakeEngine({ hold: true });
      const names = [...Array.from({ length: 40 }, (_, i) => `a${i}`), 'b'];
      const ids = await setup(engine, names);
      const own = t.rt.db.prepare('UPDATE pipelines SET owner_client_id = ? WHERE pipeline_id = ?');
      ids.forEach((id, i) => own.run(i < 40 ? 'ACME' : 'BETA', id));
      const d = dispatcher(engine, concurrency);
      for (const id of ids.slice(0, 40)) await d.start(id, 'schedule', 'scheduler');
      const b = await d.start(ids[40], 'api', null);
      expect(b.status).toBe('queued');
      const bStarted = () => engine.inputs.some((i) => i.runId === b.runId);
      let finished = 0;
      while (!bStarted() && finished < 40) {
        const first = engine.inputs[finished].runId; // the oldest running run of ACME
        engine.release(first);
        await d.wait(first);
        await new Promise((resolve) => setImmediate(resolve)); // the dispatcher picks the next run
        finished++;
      }
      expect(finished).toBe(1);
      expect(engine.inputs.findIndex((i) => i.runId === b.runId)).toBe(concurrency);
      engine.opts.hold = false;
      for (const i of engine.inputs) engine.release(i.runId);
      await d.close();
    });
  }

  it('unowned pipelines are one tenant of their own; within a tenant, runs start oldest first', async () => {
    const engine = new FakeEngine({ hold: true });
    const ids = await setup(engine, ['u1', 'u2', 'a1', 'a2']);
    const own = t.rt.db.prepare('UPDATE pipelines SET owner_client_id = ? WHERE pipeline_id = ?');
    own.run('ACME', ids[2]);
    own.run('ACME', ids[3]);
    const d = dispatcher(engine, 1);
    const runs = [];
    for (const id of ids) runs.push(await d.start(id, 'api', null));
    for (let k = 0; k < 4; k++) {
      const running = engine.inputs[k].runId;
      engine.release(running);
      await d.wait(running);
      await new Promise((resolve) => setImmediate(resolve));
    }
    // u1 first (nothing ran yet), then ACME's turn, then the unowned tenant's, then ACME's.
    expect(engine.inputs.map((i) => i.runId)).toEqual([runs[0], runs[2], runs[1], runs[3]].map((r) => r.runId));
  });

  it('a queued run is cancelled at once and never reaches the engine', async () => {
    const engine = new FakeEngine({ hold: true });
    const [a, b] = await setup(engine);
    const d = dispatcher(engine, 1);
    const first = await d.start(a, 'api', null);
    const queued = await d.start(b, 'api', null);
    const cancelled = await d.cancel(queued.runId);
    expect(cancelled).toMatchObject({ status: 'cancelled', durationMs: 0, steps: [{ status: 'skipped' }, { status: 'skipped' }] });
    engine.release(first.runId);
    await d.idle();
    expect(engine.inputs.map((i) => i.runId)).toEqual([first.runId]);
  });

  it('a cancel recorded in the store by another process stops the run at its next flush', async () => {
    const engine = new FakeEngine({ hold: true });
    const [a] = await setup(engine, ['a']);
    const d = dispatcher(engine, 1);
    const run = await d.start(a, 'cli', null);
    await engine.started(run.runId);
    // Another process (the server's API) can only flag the run.
    new RunStore({ db: t.rt.db, clock: t.rt.clock }).requestCancel(run.runId);
    t.scheduler.fireAll(); // the recorder's flush timer
    expect((await d.wait(run.runId)).status).toBe('cancelled');
  });

  it('records progress in batches: one transaction per flush, not one per reject', async () => {
    const engine = new FakeEngine({ rows: 3000, rejectsPerStep: 2500 });
    const [a] = await setup(engine, ['a']);
    const d = dispatcher(engine, 1);
    const record = vi.spyOn(t.rt.runs.store, 'record');
    const run = await d.start(a, 'api', null);
    const done = await d.wait(run.runId);
    expect(done).toMatchObject({ status: 'succeeded', rowsRejected: 2500, rowsWritten: 500 });
    expect(record.mock.calls.length).toBeLessThanOrEqual(4);
    expect(t.rt.runs.store.rejects(run.runId, 5000)).toHaveLength(1000);
  });

  it('an engine that throws fails the run with the reason; shutdown fails what is left as interrupted', async () => {
    const engine = new FakeEngine({ hold: true });
    const [a, b] = await setup(engine, ['a', 'b']);
    const d = dispatcher(engine, 1);
    const broken = dispatcher({ run: async () => Promise.reject(new Error('kaput')) } as unknown as FakeEngine, 1);
    expect((await broken.wait((await broken.start(b, 'api', null)).runId))).toMatchObject({ status: 'failed', error: 'engine: kaput' });
    const running = await d.start(a, 'api', null);
    await engine.started(running.runId);
    await d.close();
    expect(t.rt.runs.store.get(running.runId)).toMatchObject({ status: 'failed', error: 'interrupted: the controller shut down while the run was running' });
    await expect(d.start(a, 'api', null)).rejects.toThrow('shutting down');
  });

  it('at start, runs a crashed process left running or queued become failed (interrupted)', async () => {
    const engine = new FakeEngine({ hold: true });
    const [a, b] = await setup(engine, ['a', 'b']);
    const store = t.rt.runs.store;
    const running = store.create({ pipelineId: a, trigger: 'api', actor: null, owner: 'elsewhere:1', steps: [] });
    store.markRunning(running.runId, `${processOwner().split(':')[0]}:999999999`);
    const queued = store.create({ pipelineId: b, trigger: 'schedule', actor: null, owner: processOwner(), steps: [] });
    t = await t.restart();
    expect(t.rt.runs.store.get(running.runId)).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted') });
    expect(t.rt.runs.store.get(queued.runId)).toMatchObject({ status: 'failed', error: expect.stringContaining('interrupted') });
  });

  it('ownerAlive: this process is not (it restarted), a dead pid is not, a live one is, other hosts are left alone', () => {
    const host = processOwner().split(':')[0];
    expect(ownerAlive(processOwner())).toBe(false);
    expect(ownerAlive(`${host}:999999999`)).toBe(false);
    expect(ownerAlive(`${host}:${process.ppid}`)).toBe(true);
    expect(ownerAlive('another-host:1')).toBe(true);
    expect(ownerAlive(null)).toBe(false);
  });
});

describe('PipelineRuns egress', () => {
  it("refuses the controller's own listening port once the server knows it (PORT=0 picks one)", async () => {
    const t = await makeTestRuntime();
    try {
      await expect(t.rt.runs.egress.check('127.0.0.1', 41234)).resolves.toBeUndefined();
      t.rt.runs.listening(41234);
      await expect(t.rt.runs.egress.check('127.0.0.1', 41234)).rejects.toThrow("it is the controller's own listening address");
      await expect(t.rt.runs.egress.check('169.254.169.254', 80)).rejects.toThrow();
    } finally {
      await t.close();
    }
  });
});
