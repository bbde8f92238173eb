import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAs, type TestSession } from '../helpers/auth.ts';
import { FakeEngine } from '../helpers/fake-engine.ts';
import { makeTestApp, manifest, type TestApp } from '../helpers/runtime.ts';
import { clientManifest, packageWithDashboard, writeCoreModel } from '../controller/kinds/client/fixtures.ts';

/**
 * The settings UI's operations endpoints (pipelines list, session pipeline read, connections list
 * and Test) and the run endpoints it drives, for an admin and for a member granted ACME only.
 */

const ACME_DB = 'D2026A00001';
const GLOBEX_DB = 'D2026A00002';
const CLOSED_DB = 'D2026A00005';
const ENV_DB = 'D2026A00006';
const T0 = '2026-03-01T10:00:00.000Z';

const pipeline = (name: string, db: string, extra: Record<string, unknown> = {}) => ({
  name,
  source: { connectionId: db, type: 'database', config: { tableName: 'orders' } },
  destination: { connectionId: db },
  steps: [{ type: 'validate', config: { rules: [{ field: 'email', rule: 'email' }] } }, { type: 'load', config: { tableName: 'orders_out' } }],
  ...extra,
});

describe('operations endpoints (pipelines, runs, connections) and their tenancy', () => {
  let t: TestApp;
  let engine: FakeEngine;
  let admin: TestSession;
  let member: TestSession;
  const ids = { acme: '', globex: '' };

  beforeAll(async () => {
    engine = new FakeEngine({ rows: 12, rejectsPerStep: 3 });
    t = await makeTestApp({ engine });
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard('ACME', { connectionId: ACME_DB })));
    t.write('clients/GLOBEX.yaml', clientManifest(packageWithDashboard('GLOBEX', { connectionId: GLOBEX_DB })));
    t.write('connections/closed.yaml', manifest('Connection', 'closed', { connectionId: CLOSED_DB, name: 'Closed port', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 1, database: 'test', shared: true, tenantSchema: 't_{clientId}' }));
    t.write(
      'connections/env.yaml',
      manifest('Connection', 'env', { connectionId: ENV_DB, name: 'Env password', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 1, database: 'test', username: 'bi', passwordEnv: 'BI_CONN_OPERATIONS_TEST_UNSET' }),
    );
    await t.sync();
    t.write('pipelines/acme.yaml', manifest('Pipeline', 'acme', pipeline('ACME orders', ACME_DB, { schedule: { isEnabled: true, frequency: 'hourly', startTime: '10:15' } })));
    t.write('pipelines/globex.yaml', manifest('Pipeline', 'globex', pipeline('GLOBEX orders', GLOBEX_DB)));
    await t.sync();
    const one = (key: string) => (t.rt.db.prepare('SELECT pipeline_id FROM pipelines WHERE manifest_key = ?').get(key) as { pipeline_id: string }).pipeline_id;
    ids.acme = one('Pipeline/acme');
    ids.globex = one('Pipeline/globex');
    admin = await loginAs(t, { username: 'root', role: 'admin' });
    member = await loginAs(t, { username: 'mia', role: 'member', clients: ['ACME'] });
  });
  afterAll(async () => t.close());

  const get = (url: string, s: TestSession) => t.app.inject({ method: 'GET', url: `${url}/${s.userId}`, headers: s.headers });
  const post = (url: string, s: TestSession) => t.app.inject({ method: 'POST', url: `${url}/${s.userId}`, headers: s.headers });

  it('the pipelines list: every pipeline for an admin (owner, schedule, next run, last run), the granted ones for a member', async () => {
    const res = await get('/v1/bi/admin/pipelines', admin);
    expect(res.statusCode).toBe(200);
    const list = res.json().pipelines as Record<string, unknown>[];
    expect(list.map((p) => p.name)).toEqual(['ACME orders', 'GLOBEX orders']);
    expect(list[0]).toEqual({
      pipelineId: ids.acme,
      name: 'ACME orders',
      description: '',
      status: expect.any(String),
      owner: 'ACME',
      manifestKey: 'Pipeline/acme',
      source: expect.objectContaining({ connectionId: ACME_DB, type: 'database' }),
      destination: expect.objectContaining({ connectionId: ACME_DB }),
      stepCount: 3,
      schedule: expect.objectContaining({ isEnabled: true, frequency: 'hourly' }),
      nextRunAt: '2026-03-01T10:15:00.000Z',
      lastRun: null,
    });
    const mine = (await get('/v1/bi/admin/pipelines', member)).json().pipelines as { pipelineId: string }[];
    expect(mine.map((p) => p.pipelineId)).toEqual([ids.acme]);
  });

  it('the session pipeline read answers a member for a granted client and 404 (as unknown) for another tenant', async () => {
    const own = await get(`/v1/sdk/pipelines/${ids.acme}`, member);
    expect(own.statusCode).toBe(200);
    expect(own.json().data).toMatchObject({ pipelineId: ids.acme, owner: 'ACME', steps: [{ type: 'source' }, { type: 'validate' }, { type: 'load' }] });
    for (const id of [ids.globex, 'DP-424242']) {
      const res = await get(`/v1/sdk/pipelines/${id}`, member);
      expect([res.statusCode, res.json()]).toEqual([404, { success: false, message: `Pipeline ${id} not found` }]);
    }
  });

  it("a run started from the session shows in the list's lastRun; its rejects page with offset; a member cannot start, read or cancel GLOBEX runs", async () => {
    const started = await post(`/v1/sdk/pipelines/${ids.globex}/runs`, admin);
    expect(started.statusCode).toBe(202);
    const runId = started.json().run.runId as string;
    await t.rt.runs.dispatcher.wait(runId);
    const listed = (await get('/v1/bi/admin/pipelines', admin)).json().pipelines as { pipelineId: string; lastRun: { runId: string; status: string; durationMs: number } | null }[];
    expect(listed.find((p) => p.pipelineId === ids.globex)?.lastRun).toMatchObject({ runId, status: 'succeeded', durationMs: 0 });

    // 2 non-source steps × 3 rejects = 6 kept: pages of 4.
    const page1 = (await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}?limit=4`, headers: admin.headers })).json().rejects as unknown[];
    const page2 = (await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}?limit=4&offset=4`, headers: admin.headers })).json().rejects as unknown[];
    const all = (await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}`, headers: admin.headers })).json().rejects as unknown[];
    expect([page1.length, page2.length, all.length]).toEqual([4, 2, 6]);
    expect([...page1, ...page2]).toEqual(all);
    const bad = await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}?offset=-1`, headers: admin.headers });
    expect([bad.statusCode, bad.json().success, bad.json().message]).toEqual([400, false, expect.stringContaining('offset')]);

    const notFound = (what: string) => ({ success: false, message: `${what} not found` });
    const start = await post(`/v1/sdk/pipelines/${ids.globex}/runs`, member);
    expect([start.statusCode, start.json()]).toEqual([404, notFound(`Pipeline ${ids.globex}`)]);
    for (const [method, tail] of [['GET', ''], ['GET', '/rejects'], ['GET', '/logs'], ['POST', '/cancel']] as const) {
      const res = await t.app.inject({ method, url: `/v1/sdk/pipeline-runs/${runId}${tail}/${member.userId}`, headers: member.headers });
      expect([res.statusCode, res.json()], `${method} ${tail}`).toEqual([404, notFound(`Run ${runId}`)]);
    }
    expect(t.rt.runs.store.list(ids.globex, { limit: 10 }).map((r) => r.runId)).toEqual([runId]);
  });

  it('the connections list: where each points, owner, shared, what uses it; no credential; admins only', async () => {
    const res = await get('/v1/bi/admin/connections', admin);
    expect(res.statusCode).toBe(200);
    const list = res.json().connections as Record<string, unknown>[];
    const byId = Object.fromEntries(list.map((c) => [c.connectionId, c]));
    expect(byId[ACME_DB]).toMatchObject({
      owner: 'ACME',
      shared: false,
      lastTest: null,
      usedBy: { clients: ['ACME'], vdms: [{ vdmId: 'V2026A00001', name: 'Sales', clientId: 'ACME' }, { vdmId: 'V2026A00002', name: 'Customers', clientId: 'ACME' }], pipelines: [{ pipelineId: ids.acme, name: 'ACME orders' }] },
    });
    expect(byId[CLOSED_DB]).toMatchObject({ vendor: 'POSTGRESQL', host: '127.0.0.1', port: 1, database: 'test', owner: null, shared: true, credential: 'none', usedBy: { clients: [], vdms: [], pipelines: [] } });
    expect(byId[ENV_DB]).toMatchObject({ credential: 'passwordEnv', username: 'bi' });
    expect(res.body).not.toContain('BI_CONN_OPERATIONS_TEST_UNSET');
    const refused = await get('/v1/bi/admin/connections', member);
    expect([refused.statusCode, refused.json()]).toEqual([403, { success: false, error: 'Admin role required' }]);
  });

  it('Test connects with the stored settings and records the outcome as lastTest (refused port; unset passwordEnv); unknown → 404', async () => {
    const closed = await post(`/v1/bi/admin/connections/${CLOSED_DB}/test`, admin);
    expect(closed.statusCode).toBe(200);
    expect(closed.json().connection.lastTest).toEqual({ at: T0, ok: false, message: expect.stringContaining('Connection refused by 127.0.0.1:1/test'), durationMs: expect.any(Number), by: admin.userId });
    const env = (await post(`/v1/bi/admin/connections/${ENV_DB}/test`, admin)).json().connection.lastTest;
    expect(env).toMatchObject({ ok: false, message: `Not tested, no password was sent: Connection ${ENV_DB}: environment variable BI_CONN_OPERATIONS_TEST_UNSET (passwordEnv) is not set` });
    const listed = (await get('/v1/bi/admin/connections', admin)).json().connections as { connectionId: string; lastTest: unknown }[];
    expect(listed.find((c) => c.connectionId === CLOSED_DB)?.lastTest).toEqual(closed.json().connection.lastTest);
    const unknown = await post('/v1/bi/admin/connections/D2026A09999/test', admin);
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { success: false, error: 'Connection D2026A09999 not found' }]);
    const byMember = await post(`/v1/bi/admin/connections/${CLOSED_DB}/test`, member);
    expect(byMember.statusCode).toBe(403);
  });
});
