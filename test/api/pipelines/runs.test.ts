import { afterEach, describe, expect, it, vi } from 'vitest';
import { createUserWithKey, loginAs, type TestKey } from '../../helpers/auth.ts';
import { FakeEngine, type FakeEngineOptions } from '../../helpers/fake-engine.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { minimalPayload } from '../../controller/kinds/pipeline/fixtures.ts';

const T0 = '2026-03-01T10:00:00.000Z';

describe('pipeline runs over HTTP', () => {
  let t: TestApp;
  let key: TestKey;
  let engine: FakeEngine;
  async function setup(opts: FakeEngineOptions = {}) {
    engine = new FakeEngine(opts);
    t = await makeTestApp({ engine });
    key = await createUserWithKey(t);
  }
  afterEach(async () => t.close());

  async function importPipeline(payload = minimalPayload('Orders')): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/import-pipeline', headers: key.headers, payload });
    expect(res.statusCode).toBe(201);
    return res.json().data.pipelineId as string;
  }
  const req = (method: 'GET' | 'POST', url: string, headers = key.headers) => t.app.inject({ method, url, headers });
  const settle = (runId: string) => t.rt.runs.dispatcher.wait(runId);

  it('POST /runs answers 202 with the run; the run succeeds with its steps, counts and trigger api', async () => {
    await setup({ rows: 5, rejectsPerStep: 1 });
    const pipelineId = await importPipeline();
    const finished = vi.spyOn(t.rt.notifications, 'onRun');
    const res = await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`);
    expect(res.statusCode).toBe(202);
    const { run } = res.json();
    expect(run.runId).toMatch(/^RUN-\d+$/);
    expect(res.json()).toEqual({
      success: true,
      run: {
        runId: run.runId,
        pipelineId,
        status: 'running',
        trigger: 'api',
        attempt: 1,
        queuedAt: T0,
        startedAt: T0,
        finishedAt: null,
        durationMs: null,
        rowsRead: 0,
        rowsWritten: 0,
        rowsRejected: 0,
        error: null,
        steps: [
          { stepId: expect.stringMatching(/^step-\d+-0$/), type: 'source', name: 'Source', status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null },
          { stepId: expect.stringMatching(/^step-\d+-1$/), type: 'load', name: 'Load', status: 'pending', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null },
        ],
      },
    });
    await settle(run.runId);
    const got = await req('GET', `/v1/sdk/pipeline-runs/${run.runId}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual({
      success: true,
      run: {
        ...run,
        status: 'succeeded',
        finishedAt: T0,
        durationMs: 0,
        rowsRead: 5,
        rowsWritten: 4,
        rowsRejected: 1,
        steps: [
          { ...run.steps[0], status: 'succeeded', rowsIn: 0, rowsOut: 5, durationMs: 1 },
          { ...run.steps[1], status: 'succeeded', rowsIn: 5, rowsOut: 4, rowsRejected: 1, durationMs: 1 },
        ],
      },
    });
    // The engine got the stored steps in order, and the run's connections only.
    expect(engine.inputs[0].steps.map((s) => s.type)).toEqual(['source', 'load']);
    const rejects = await req('GET', `/v1/sdk/pipeline-runs/${run.runId}/rejects`);
    expect(rejects.json()).toEqual({ success: true, rejects: [{ step: run.steps[1].stepId, row: { id: 0, step: 1 }, reasons: ['row 0 refused by Load'] }] });
    const logs = await req('GET', `/v1/sdk/pipeline-runs/${run.runId}/logs`);
    expect(logs.json().logs.map((l: { message: string }) => l.message)).toEqual([`run ${run.runId} started`, 'Source: 5 rows', 'Load: 4 rows']);
    // Metrics and notifications hear of it once.
    expect(finished.mock.calls).toEqual([
      [{ runId: run.runId, pipelineId, pipelineName: 'Orders', status: 'succeeded', durationMs: 0, rowsRead: 5, rowsWritten: 4, rowsRejected: 1, error: null }],
    ]);
    // The pipeline read shows the last run.
    const pipeline = await req('GET', `/v1/sdk/pipelines/${pipelineId}`);
    expect(pipeline.json().data.lastRun).toEqual(got.json().run);
  });

  it('409 {success:false, message} while a run is queued or running; a new run once it ended', async () => {
    await setup({ hold: true });
    const pipelineId = await importPipeline();
    const first = (await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`)).json().run;
    const second = await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`);
    expect(second.statusCode).toBe(409);
    expect(second.json()).toEqual({ success: false, message: `Pipeline ${pipelineId} already has an active run (${first.runId})` });
    engine.release(first.runId);
    await settle(first.runId);
    const third = await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`);
    expect(third.statusCode).toBe(202);
    expect(third.json().run.runId).not.toBe(first.runId);
    engine.release(third.json().run.runId);
    await settle(third.json().run.runId);
  });

  it('cancel: a running run ends cancelled, loads nothing; cancelling an ended run is 409', async () => {
    await setup({ hold: true });
    const pipelineId = await importPipeline();
    const run = (await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`)).json().run;
    await engine.started(run.runId);
    const res = await req('POST', `/v1/sdk/pipeline-runs/${run.runId}/cancel`);
    expect(res.statusCode).toBe(202);
    expect(res.json().success).toBe(true);
    expect(res.json().run.runId).toBe(run.runId);
    const done = await settle(run.runId);
    expect(done).toMatchObject({ status: 'cancelled', rowsWritten: 0 });
    expect(done.steps.map((s) => s.status)).toEqual(['failed', 'skipped']);
    const again = await req('POST', `/v1/sdk/pipeline-runs/${run.runId}/cancel`);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({ success: false, message: `Run ${run.runId} has already ended (cancelled)` });
  });

  it('lists runs newest first, filtered by status and limited; bad status or limit is a 400 naming the field', async () => {
    await setup({ failAt: { index: 1, error: 'boom' } });
    const pipelineId = await importPipeline();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const run = (await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`)).json().run;
      await settle(run.runId);
      ids.push(run.runId);
      t.clock.advance(1000);
    }
    const all = (await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs`)).json();
    expect(all.success).toBe(true);
    expect(all.runs.map((r: { runId: string }) => r.runId)).toEqual([...ids].reverse());
    expect(all.runs[0]).toMatchObject({ status: 'failed', error: 'Load: boom', rowsWritten: 0 });
    expect((await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs?limit=2&status=failed`)).json().runs.map((r: { runId: string }) => r.runId)).toEqual([ids[2], ids[1]]);
    expect((await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs?status=succeeded`)).json()).toEqual({ success: true, runs: [] });
    // The query is checked by the route's schema at the edge: the texts are the ones the hand-written checks gave.
    for (const [q, field, message] of [
      ['status=done', 'status', 'status must be one of queued, running, succeeded, failed, cancelled'],
      ['limit=0', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=abc', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=1001', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=-1', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=1e9', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=1.5', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=0x10', 'limit', 'limit must be an integer from 1 to 1000'],
      ['limit=2&limit=3', 'limit', 'limit must be an integer from 1 to 1000'],
    ]) {
      const res = await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs?${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json()).toEqual({ success: false, message, code: 'validation', problems: [{ path: `query.${field}`, message }] });
    }
    // An empty value is no value (the default), and a parameter the route does not know is ignored.
    expect((await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs?limit=&status=&color=blue`)).json().runs).toHaveLength(3);
    // Every bad value is named, in the order of the schema.
    const two = await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs?limit=0&status=done`);
    expect(two.json()).toMatchObject({
      message: 'status must be one of queued, running, succeeded, failed, cancelled; limit must be an integer from 1 to 1000',
      problems: [{ path: 'query.status' }, { path: 'query.limit' }],
    });
    const bad = await req('GET', `/v1/sdk/pipeline-runs/${ids[0]}/rejects?limit=-1`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ success: false, message: 'limit must be an integer from 1 to 1000', code: 'validation', problems: [{ path: 'query.limit', message: 'limit must be an integer from 1 to 1000' }] });
    const offset = await req('GET', `/v1/sdk/pipeline-runs/${ids[0]}/rejects?offset=1001`);
    expect(offset.json()).toMatchObject({ message: 'offset must be an integer from 0 to 1000', problems: [{ path: 'query.offset' }] });
    expect((await req('GET', `/v1/sdk/pipeline-runs/${ids[0]}/rejects?offset=1000&limit=5`)).json()).toEqual({ success: true, rejects: [] });
  });

  it('unknown pipeline and run IDs answer 404; API key required', async () => {
    await setup();
    for (const [method, url, message] of [
      ['POST', '/v1/sdk/pipelines/DP-1/runs', 'Pipeline DP-1 not found'],
      ['GET', '/v1/sdk/pipelines/DP-1/runs', 'Pipeline DP-1 not found'],
      ['GET', '/v1/sdk/pipeline-runs/RUN-1', 'Run RUN-1 not found'],
      ['GET', '/v1/sdk/pipeline-runs/nope', 'Run nope not found'],
      ['POST', '/v1/sdk/pipeline-runs/RUN-1/cancel', 'Run RUN-1 not found'],
      ['GET', '/v1/sdk/pipeline-runs/RUN-1/rejects', 'Run RUN-1 not found'],
    ] as const) {
      const res = await req(method, url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ success: false, message });
    }
    const anon = await t.app.inject({ method: 'GET', url: '/v1/sdk/pipeline-runs/RUN-1' });
    expect(anon.statusCode).toBe(401);
    expect(anon.json()).toEqual({ error: 'API key required' });
  });

  it("a key scoped to a client sees only pipelines on that client's connection; others answer like unknown IDs", async () => {
    await setup();
    const insertClient = t.rt.db.prepare(
      "INSERT INTO clients (client_id, client_name, connection_id, status, onboarded_date, last_modified_date) VALUES (?, ?, ?, 'ACTIVE', ?, ?)",
    );
    insertClient.run('ACME', 'Acme', 'D2026A00001', T0, T0);
    insertClient.run('GLOBEX', 'Globex', 'D2026A00009', T0, T0);
    // Ownership is stored on the connection (issue 13): ACME owns D…01; D…02 belongs to nobody.
    t.rt.db
      .prepare("INSERT INTO connections (connection_id, name, owner_client_id, created_at, updated_at) VALUES ('D2026A00001', 'acme', 'ACME', ?, ?)")
      .run(T0, T0);
    const own = await importPipeline({ ...minimalPayload('Own'), destination: { connectionId: 'D2026A00001' } });
    const mixed = await importPipeline(minimalPayload('Mixed')); // source D…01, destination D…02
    const acme = await createUserWithKey(t, { clientId: 'ACME' });
    const globex = await createUserWithKey(t, { clientId: 'GLOBEX' });
    const mine = await req('POST', `/v1/sdk/pipelines/${own}/runs`, acme.headers);
    expect(mine.statusCode).toBe(202);
    const runId = mine.json().run.runId as string;
    await settle(runId);
    expect((await req('POST', `/v1/sdk/pipelines/${mixed}/runs`, acme.headers)).json()).toEqual({ success: false, message: `Pipeline ${mixed} not found` });
    for (const [method, url, message] of [
      ['POST', `/v1/sdk/pipelines/${own}/runs`, `Pipeline ${own} not found`],
      ['GET', `/v1/sdk/pipelines/${own}/runs`, `Pipeline ${own} not found`],
      ['GET', `/v1/sdk/pipeline-runs/${runId}`, `Run ${runId} not found`],
      ['POST', `/v1/sdk/pipeline-runs/${runId}/cancel`, `Run ${runId} not found`],
      ['GET', `/v1/sdk/pipeline-runs/${runId}/rejects`, `Run ${runId} not found`],
    ] as const) {
      const res = await req(method, url, globex.headers);
      expect(res.statusCode, url).toBe(404);
      expect(res.json()).toEqual({ success: false, message });
    }
    // An unscoped key sees everything.
    expect((await req('GET', `/v1/sdk/pipeline-runs/${runId}`)).statusCode).toBe(200);
  });

  it('session variants with {userId} last: start, read, list, cancel, rejects', async () => {
    await setup({ hold: true });
    const pipelineId = await importPipeline();
    const s = await loginAs(t);
    const started = await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs/${s.userId}`, s.headers);
    expect(started.statusCode).toBe(202);
    const runId = started.json().run.runId as string;
    expect(started.json().run.trigger).toBe('api');
    expect((await req('GET', `/v1/sdk/pipeline-runs/${runId}/${s.userId}`, s.headers)).json().run.runId).toBe(runId);
    expect((await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs/${s.userId}`, s.headers)).json().runs).toHaveLength(1);
    expect((await req('POST', `/v1/sdk/pipeline-runs/${runId}/cancel/${s.userId}`, s.headers)).statusCode).toBe(202);
    expect((await settle(runId)).status).toBe('cancelled');
    expect((await req('GET', `/v1/sdk/pipeline-runs/${runId}/rejects/${s.userId}`, s.headers)).json()).toEqual({ success: true, rejects: [] });
    // Another user's path, or no CSRF token: refused like every S endpoint.
    expect((await req('GET', `/v1/sdk/pipeline-runs/${runId}/U2026A09999`, s.headers)).statusCode).toBe(403);
    expect((await req('GET', `/v1/sdk/pipeline-runs/${runId}/${s.userId}`, { cookie: s.cookie })).statusCode).toBe(403);
  });
});
