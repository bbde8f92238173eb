import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUserWithKey, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, manifest, withApp, type TestApp } from '../../helpers/runtime.ts';
import { buildApp } from '../../../api/app.ts';
import { type PgSchema, pgSchema } from './pg.ts';

/**
 * Pipeline runs end to end over HTTP with the real engine and the local PostgreSQL: a unique
 * schema per test, the Connection a manifest, the pipeline imported through the API.
 */
describe('pipeline runs against PostgreSQL', () => {
  let db: PgSchema;
  let t: TestApp;
  let key: TestKey;
  beforeEach(async () => {
    db = await pgSchema();
    t = await makeTestApp();
    t.write(
      'connections/local.yaml',
      manifest('Connection', 'local', {
        connectionId: 'D2026A00001',
        name: 'Local PostgreSQL',
        vendor: 'POSTGRESQL',
        host: '127.0.0.1',
        port: 5432,
        database: 'test',
        schema: db.schema,
        username: db.conn.username,
      }),
    );
    await t.sync();
    key = await createUserWithKey(t);
  });
  afterEach(async () => {
    await t.close();
    await db.drop();
  });

  const S = () => `"${db.schema}"`;
  async function seed(n: number): Promise<void> {
    await db.client.query(`CREATE TABLE ${S()}.orders (id integer, email text, amount text)`);
    await db.client.query(
      `INSERT INTO ${S()}.orders SELECT i, CASE WHEN i % 10 = 0 THEN 'not-an-email' ELSE 'u' || i || '@x.io' END, (i * 3)::text FROM generate_series(1, ${n}) i`,
    );
  }
  function payload(extra: Record<string, unknown> = {}) {
    return {
      name: 'Orders to reporting',
      source: { connectionId: 'D2026A00001', type: 'database', config: { tableName: 'orders' } },
      destination: { connectionId: 'D2026A00001', schemaName: db.schema },
      steps: [
        { type: 'transform', config: { fieldMappings: [{ source: 'amount', target: 'total' }], rules: [{ field: 'total', rule: 'to_integer' }] } },
        { type: 'validate', config: { rules: [{ field: 'email', rule: 'email' }] } },
        { type: 'load', config: { tableName: 'orders_out' } },
      ],
      ...extra,
    };
  }
  async function importPipeline(extra: Record<string, unknown> = {}): Promise<string> {
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/import-pipeline', headers: key.headers, payload: payload(extra) });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data.pipelineId as string;
  }
  const req = (method: 'GET' | 'POST', url: string) => t.app.inject({ method, url, headers: key.headers });
  const count = async (table: string) => (await db.rows<{ n: number }>(`SELECT count(*)::int AS n FROM ${S()}.${table}`))[0].n;

  it('POST /runs moves the rows into PostgreSQL; the run record, its steps and its rejects say what happened', async () => {
    await seed(50);
    const pipelineId = await importPipeline();
    const started = await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`);
    expect(started.statusCode).toBe(202);
    const runId = started.json().run.runId as string;
    await t.rt.runs.dispatcher.wait(runId);
    const { run } = (await req('GET', `/v1/sdk/pipeline-runs/${runId}`)).json();
    expect(run).toMatchObject({ runId, pipelineId, status: 'succeeded', trigger: 'api', rowsRead: 50, rowsRejected: 5, rowsWritten: 45, error: null });
    expect(run.steps.map((s: { type: string; status: string; rowsIn: number; rowsOut: number; rowsRejected: number }) => [s.type, s.status, s.rowsIn, s.rowsOut, s.rowsRejected])).toEqual([
      ['source', 'succeeded', 50, 50, 0],
      ['transform', 'succeeded', 50, 50, 0],
      ['validate', 'succeeded', 50, 45, 5],
      ['load', 'succeeded', 45, 45, 0],
    ]);
    expect(await count('orders_out')).toBe(45);
    expect(await db.rows(`SELECT id, email, total FROM ${S()}.orders_out ORDER BY id LIMIT 2`)).toEqual([
      { id: 1, email: 'u1@x.io', total: 3 },
      { id: 2, email: 'u2@x.io', total: 6 },
    ]);
    const rejects = (await req('GET', `/v1/sdk/pipeline-runs/${runId}/rejects?limit=2`)).json();
    expect(rejects).toEqual({
      success: true,
      rejects: [
        { step: run.steps[2].stepId, row: { id: 10, email: 'not-an-email', total: 30 }, reasons: ['email: email = "not-an-email" is not an email address'] },
        { step: run.steps[2].stepId, row: { id: 20, email: 'not-an-email', total: 60 }, reasons: ['email: email = "not-an-email" is not an email address'] },
      ],
    });
    const pipeline = (await req('GET', `/v1/sdk/pipelines/${pipelineId}`)).json().data;
    expect(pipeline.lastRun).toMatchObject({ runId, status: 'succeeded' });
  });

  it('cancel: the run ends cancelled and the destination is exactly as before', async () => {
    await seed(20);
    const pipelineId = await importPipeline();
    const first = (await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`)).json().run.runId as string;
    expect((await t.rt.runs.dispatcher.wait(first)).status).toBe('succeeded');
    expect(await count('orders_out')).toBe(18);
    await db.client.query(`INSERT INTO ${S()}.orders SELECT i, 'u' || i || '@x.io', '1' FROM generate_series(21, 300000) i`);
    const second = (await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`)).json().run.runId as string;
    const cancel = await req('POST', `/v1/sdk/pipeline-runs/${second}/cancel`);
    expect(cancel.statusCode).toBe(202);
    const done = await t.rt.runs.dispatcher.wait(second);
    expect(done).toMatchObject({ status: 'cancelled', rowsWritten: 0 });
    expect(await count('orders_out')).toBe(18);
  });

  it('a run left running by a crash is failed (interrupted) when the controller starts again', async () => {
    await seed(5);
    const pipelineId = await importPipeline();
    const store = t.rt.runs.store;
    const run = store.create({ pipelineId, trigger: 'api', actor: null, owner: 'gone-host:1', steps: [] });
    store.markRunning(run.runId, `${t.rt.runs.dispatcher.owner.split(':')[0]}:999999999`);
    await t.app.close();
    const restarted = await t.restart();
    t = await withApp(restarted, await buildApp({ runtime: restarted.rt }));
    const got = (await req('GET', `/v1/sdk/pipeline-runs/${run.runId}`)).json().run;
    expect(got).toMatchObject({ status: 'failed', error: 'interrupted: the controller stopped while the run was running' });
    // The pipeline can run again at once.
    const again = await req('POST', `/v1/sdk/pipelines/${pipelineId}/runs`);
    expect(again.statusCode).toBe(202);
    expect((await t.rt.runs.dispatcher.wait(again.json().run.runId)).status).toBe('succeeded');
  });

  it('an enabled schedule fires at nextRunAt (injected clock) and loads the rows with trigger schedule', async () => {
    await seed(10);
    // The fake clock stands at 2026-03-01T10:00Z.
    const pipelineId = await importPipeline({ schedule: { isEnabled: true, frequency: 'hourly', startTime: '10:15' } });
    expect((await req('GET', `/v1/sdk/pipelines/${pipelineId}`)).json().data.nextRunAt).toBe('2026-03-01T10:15:00.000Z');
    t.clock.advance(15 * 60_000);
    t.scheduler.fireAll();
    await t.rt.runs.schedules.settled();
    await t.rt.runs.dispatcher.idle();
    const { runs } = (await req('GET', `/v1/sdk/pipelines/${pipelineId}/runs`)).json();
    expect(runs.map((r: { trigger: string; status: string }) => [r.trigger, r.status])).toEqual([['schedule', 'succeeded']]);
    expect(await count('orders_out')).toBe(9);
    const view = (await req('GET', `/v1/sdk/pipelines/${pipelineId}`)).json().data;
    expect(view).toMatchObject({ nextRunAt: '2026-03-01T11:15:00.000Z', lastRun: { runId: runs[0].runId, trigger: 'schedule' } });
  });
});
