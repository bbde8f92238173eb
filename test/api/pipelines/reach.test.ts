import { createServer, type IncomingHttpHeaders } from 'node:http';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../controller/config.ts';
import { StreamingPipelineEngine } from '../../../controller/runs/engine/engine.ts';
import { createUserWithKey, loginAs, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';

/** A loopback listener that records the headers of every request and answers one JSON row. */
async function recorder(): Promise<{ url: string; seen: IncomingHttpHeaders[]; close: () => Promise<void> }> {
  const seen: IncomingHttpHeaders[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[{"id":1}]');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, seen, close: () => new Promise((r) => { server.close(() => r()); server.closeAllConnections(); }) };
}

const ACME_DB = 'D2026A00001';
const SHARED_API = 'D2026A00002';
const SHARED_DB = 'D2026A00003';
const SECRET = 'shared-api-password-9f2c';

describe('what a tenant pipeline may reach: credentials go to their own endpoint only', () => {
  let t: TestApp;
  let key: TestKey;
  let api: Awaited<ReturnType<typeof recorder>>;
  let attacker: Awaited<ReturnType<typeof recorder>>;

  beforeAll(async () => {
    api = await recorder();
    attacker = await recorder();
    process.env.BI_CONN_REACH_TEST = SECRET;
  });
  afterAll(async () => {
    delete process.env.BI_CONN_REACH_TEST;
    await api.close();
    await attacker.close();
  });
  afterEach(async () => {
    api.seen.length = 0;
    attacker.seen.length = 0;
    await t.close();
  });

  async function setup(): Promise<void> {
    const dir = mkdtempSync(join(tmpdir(), 'bi-reach-'));
    // Loopback listeners stand in for the outside world: the egress allow-list names them.
    const config = loadConfig({}, { manifestsDir: join(dir, 'manifests'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data'), pipelineEgress: ['127.0.0.1'], pipelineFilesDir: join(dir, 'files') });
    for (const client of ['ACME', 'GLOBEX']) {
      mkdirSync(join(dir, 'files', client), { recursive: true });
      writeFileSync(join(dir, 'files', client, 'orders.csv'), `id,client\n1,${client}\n`);
    }
    t = await makeTestApp({ dir, config, engine: new StreamingPipelineEngine({ sleep: async () => {}, apiMaxRetries: 0 }) });
    t.write('connections/acme.yaml', manifest('Connection', 'acme', { connectionId: ACME_DB, name: 'ACME warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 1, database: 'test', owner: 'ACME' }));
    t.write('connections/api.yaml', manifest('Connection', 'api', { connectionId: SHARED_API, name: 'Shop API', accountUrl: api.url, passwordEnv: 'BI_CONN_REACH_TEST', shared: true, tenantSchema: 't_{clientId}' }));
    t.write(
      'connections/shared-db.yaml',
      manifest('Connection', 'shared-db', { connectionId: SHARED_DB, name: 'Platform warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 1, database: 'test', username: 'bi', passwordEnv: 'BI_CONN_REACH_TEST', shared: true, tenantSchema: 't_{clientId}' }),
    );
    await t.sync();
    key = await createUserWithKey(t, { clientId: 'ACME' });
  }

  const payload = (source: Record<string, unknown>) => ({
    name: 'Steal',
    source: { type: 'api', ...source },
    destination: { connectionId: ACME_DB },
    steps: [],
  });
  const importPipeline = (body: unknown) => t.app.inject({ method: 'POST', url: '/v1/sdk/import-pipeline', headers: key.headers, payload: body as object });

  it('refuses at import an api source whose absolute endpoint is off its connection’s origin (400 naming source.config.endpoint)', async () => {
    await setup();
    const res = await importPipeline(payload({ connectionId: SHARED_API, config: { endpoint: `${attacker.url}/collect` } }));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      message: `source.config.endpoint ${attacker.url} is not the address of connection ${SHARED_API} (${api.url}): its credential is sent only there`,
      code: 'validation',
      problems: expect.any(Array),
    });
    // A protocol-relative endpoint is absolute too; a step's own endpoint is named by its index.
    const relative = await importPipeline({
      ...payload({ connectionId: SHARED_API, config: { endpoint: '/orders' } }),
      steps: [{ type: 'source', config: { endpoint: `//127.0.0.1:${new URL(attacker.url).port}/x` } }],
    });
    expect(relative.statusCode).toBe(400);
    expect(relative.json().message).toMatch(/^steps\[0\]\.config\.endpoint http:\/\/127\.0\.0\.1:\d+ is not the address of connection D2026A00002/);
    // A database connection's password never goes over HTTP, wherever the endpoint points.
    const db = await importPipeline(payload({ connectionId: SHARED_DB, config: { endpoint: `${attacker.url}/collect` } }));
    expect(db.statusCode).toBe(400);
    expect(db.json()).toEqual({
      success: false,
      message: `source.config.endpoint connection ${SHARED_DB} is a database connection: its password is never sent over HTTP`,
      code: 'validation',
      problems: expect.any(Array),
    });
    expect(attacker.seen).toEqual([]);
  });

  it('sends the credential to the connection’s own origin (a relative endpoint)', async () => {
    await setup();
    const res = await importPipeline(payload({ connectionId: SHARED_API, config: { endpoint: '/orders', paginated: false } }));
    expect(res.statusCode).toBe(201);
    const run = await t.app.inject({ method: 'POST', url: `/v1/sdk/pipelines/${res.json().data.pipelineId}/runs`, headers: key.headers });
    expect(run.statusCode).toBe(202);
    await t.rt.runs.dispatcher.wait(run.json().run.runId);
    expect(api.seen.map((h) => h.authorization)).toEqual([`Bearer ${SECRET}`]);
  });

  it('fails the step of a stored pipeline that predates the rule: the foreign endpoint never sees the credential', async () => {
    await setup();
    // Written as a manifest (no import check): the run decides again.
    t.write('pipelines/steal.yaml', manifest('Pipeline', 'steal', payload({ connectionId: SHARED_API, config: { endpoint: `${attacker.url}/collect`, paginated: false } })));
    t.write('pipelines/steal-db.yaml', manifest('Pipeline', 'steal-db', { ...payload({ connectionId: SHARED_DB, config: { endpoint: `${attacker.url}/db`, paginated: false } }), name: 'Steal DB' }));
    await t.sync();
    for (const name of ['steal', 'steal-db']) {
      const { pipeline_id: id, owner_client_id: owner } = t.rt.db.prepare('SELECT pipeline_id, owner_client_id FROM pipelines WHERE manifest_key = ?').get(`Pipeline/${name}`) as {
        pipeline_id: string;
        owner_client_id: string;
      };
      expect(owner).toBe('ACME');
      const run = await t.app.inject({ method: 'POST', url: `/v1/sdk/pipelines/${id}/runs`, headers: key.headers });
      expect(run.statusCode).toBe(202);
      const done = await t.rt.runs.dispatcher.wait(run.json().run.runId);
      expect(done.status).toBe('failed');
      expect(done.error).toMatch(/^step Source \(step-\d+-0\) failed: config\.endpoint /);
    }
    expect(attacker.seen).toEqual([]);
  });

  it('Test Connection of a connection stored before the passwordEnv rule reads no controller setting and sends nothing', async () => {
    await setup();
    process.env.BI_SECRET_KEY_REACH_TEST = 'controller-setting';
    try {
      // A row written before the rule (or around the schema) naming one of the controller's settings.
      t.rt.db.prepare("UPDATE connections SET password_env = 'BI_SECRET_KEY_REACH_TEST' WHERE connection_id = ?").run(SHARED_DB);
      const admin = await loginAs(t, { username: 'root', role: 'admin' });
      const res = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${SHARED_DB}/test/${admin.userId}`, headers: admin.headers });
      expect(res.statusCode).toBe(200);
      expect(res.json().connection.lastTest).toMatchObject({
        ok: false,
        message: `Not tested, no password was sent: Connection ${SHARED_DB}: passwordEnv "BI_SECRET_KEY_REACH_TEST" must name a credential variable matching BI_CONN_[A-Z0-9_]+`,
      });
    } finally {
      delete process.env.BI_SECRET_KEY_REACH_TEST;
    }
  });

  it('pins a shared connection to the tenant’s schema: any other schema is refused at import, naming the field', async () => {
    await setup();
    const lookup = { type: 'db_lookup', config: { connectionId: SHARED_DB, tableName: 'customers', lookupKey: 'customerId', joinField: 'id', schemaName: 't_globex' } };
    const body = (destination: Record<string, unknown>, steps: unknown[]) => ({
      name: 'Orders',
      source: { connectionId: ACME_DB, type: 'database', config: { tableName: 'orders' } },
      destination: { connectionId: SHARED_DB, ...destination },
      steps,
    });
    const res = await importPipeline(body({ schemaName: 't_globex' }, [lookup, { type: 'load', config: { tableName: 'orders' } }, { type: 'stage', config: { tableName: 's', schemaName: 'public' } }, { type: 'reconcile', config: {} }]));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      message:
        `steps[0].config.schemaName must be t_acme (client ACME's schema on shared connection ${SHARED_DB}); ` +
        `destination.schemaName must be t_acme (client ACME's schema on shared connection ${SHARED_DB}); ` +
        `steps[2].config.schemaName must be t_acme (client ACME's schema on shared connection ${SHARED_DB})`,
      code: 'validation',
      problems: expect.any(Array),
    });
    // The tenant's own schema, or none named (the pinned one is used): accepted.
    const ok = await importPipeline(body({ schemaName: 't_acme' }, [{ ...lookup, config: { ...lookup.config, schemaName: undefined } }, { type: 'load', config: { tableName: 'orders' } }]));
    expect(ok.statusCode).toBe(201);
  });

  it('a shared connection stored without tenantSchema (before the rule) is refused to a tenant’s pipeline', async () => {
    await setup();
    t.rt.db.prepare('UPDATE connections SET tenant_schema = NULL WHERE connection_id = ?').run(SHARED_DB);
    const res = await importPipeline({ name: 'Orders', source: { connectionId: ACME_DB, type: 'database', config: { tableName: 'orders' } }, destination: { connectionId: SHARED_DB }, steps: [{ type: 'load', config: { tableName: 'o' } }] });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      message: `destination.schemaName: connection ${SHARED_DB} is shared without tenantSchema: client ACME's pipelines may not use it`,
      code: 'validation',
      problems: expect.any(Array),
    });
  });

  it('a run of ACME’s pipeline reads files from ACME’s folder only (the owner reaches the run)', async () => {
    await setup();
    const ids: string[] = [];
    for (const path of ['orders.csv', 'GLOBEX/orders.csv']) {
      const res = await importPipeline({ name: `Files ${path}`, source: { connectionId: ACME_DB, type: 'file', config: { path } }, destination: { connectionId: ACME_DB }, steps: [] });
      expect(res.statusCode).toBe(201);
      ids.push(res.json().data.pipelineId);
    }
    const runOf = async (id: string) => {
      const run = await t.app.inject({ method: 'POST', url: `/v1/sdk/pipelines/${id}/runs`, headers: key.headers });
      return t.rt.runs.dispatcher.wait(run.json().run.runId);
    };
    expect(await runOf(ids[0])).toMatchObject({ status: 'succeeded', rowsRead: 1 });
    expect(await runOf(ids[1])).toMatchObject({ status: 'failed', rowsRead: 0, error: expect.stringMatching(/failed: file GLOBEX\/orders\.csv does not exist in BI_PIPELINE_FILES_DIR$/) });
  });
});
