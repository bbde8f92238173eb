import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { loginAs } from '../../helpers/auth.ts';
import { makeTestApp, manifest, withApp, type TestApp } from '../../helpers/runtime.ts';
import { makeGitRuntime, Remote, warehouseRemote, connection, type GitTestRuntime } from '../../controller/git/harness.ts';
import { connectionSet, inputs } from '../../controller/kinds/clientset/fixtures.ts';
import { REDACTED, redactManifest } from '../../../controller/usecases/objects.ts';

const wh = (warehouse: string, extra: Record<string, unknown> = {}) =>
  manifest('Connection', 'wh', { name: 'Warehouse', vendor: 'SNOWFLAKE', accountUrl: 'https://acme.snowflakecomputing.com', warehouse, passwordEnv: 'BI_CONN_PW', ...extra });

describe('objects API (directory mode)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let member: Record<string, string>;
  beforeEach(async () => {
    t = await makeTestApp();
    admin = (await loginAs(t, { role: 'admin' })).headers;
    member = (await loginAs(t, { role: 'member' })).headers;
  });
  afterEach(async () => t.close());

  const get = (url: string, headers = admin) => t.app.inject({ url, headers });

  it('GET /v1/reconciler/objects/:kind/:name: desired and applied manifests, in sync, then the field diff when the file changes', async () => {
    t.write('connections/wh.yaml', wh('BI_WH'));
    await t.sync();
    const first = await get('/v1/reconciler/objects/Connection/wh');
    expect(first.statusCode).toBe(200);
    const o = first.json().object;
    expect(o).toMatchObject({ key: 'Connection/wh', source: 'file', path: 'connections/wh.yaml', phase: 'Synced', inSync: true, changes: [] });
    expect(o.desired.spec.warehouse).toBe('BI_WH');
    expect(o.applied).toMatchObject({ version: 1, manifest: { spec: { warehouse: 'BI_WH', vendor: 'SNOWFLAKE' } } });

    // A pipeline whose new version does not apply (a schedule firing every second): desired and applied differ field by field.
    const pipeline = (cronExpression: string, table: string) =>
      manifest('Pipeline', 'orders', {
        name: 'Orders',
        source: { connectionId: 'D2026A00001', type: 'database' },
        destination: { connectionId: 'D2026A00001' },
        steps: [{ type: 'load', config: { tableName: table } }],
        schedule: { isEnabled: true, frequency: 'cron', cronExpression },
      });
    t.write('pipelines/orders.yaml', pipeline('0 * * * *', 'orders'));
    await t.sync();
    expect((await get('/v1/reconciler/objects/Pipeline/orders')).json().object).toMatchObject({ phase: 'Synced', inSync: true });
    t.write('pipelines/orders.yaml', pipeline('* * * * * *', 'orders_v2'));
    await t.sync();
    const second = (await get('/v1/reconciler/objects/Pipeline/orders')).json().object;
    expect(second.phase).toBe('Failed');
    expect(second.inSync).toBe(false);
    expect(second.changes).toEqual(
      expect.arrayContaining([
        { path: 'spec.schedule.cronExpression', from: '0 * * * *', to: '* * * * * *' },
        { path: 'spec.steps[0].config.tableName', from: 'orders', to: 'orders_v2' },
      ]),
    );
    expect(second.applied.manifest.spec.steps[0].config.tableName).toBe('orders');
  });

  it('credential-like fields are never shown (redacted), references are', () => {
    const doc = { spec: { passwordEnv: 'BI_CONN_PW', secretRef: 'secret:abc', source: { headers: { Authorization: 'Bearer x', password: 'p' } }, list: [{ token: 't' }] } };
    expect(redactManifest(doc)).toEqual({
      spec: { passwordEnv: 'BI_CONN_PW', secretRef: 'secret:abc', source: { headers: { Authorization: REDACTED, password: REDACTED } }, list: [{ token: REDACTED }] },
    });
  });

  it('an unknown object is 404, an unknown kind 400 naming kind, a member 403', async () => {
    expect((await get('/v1/reconciler/objects/Pipeline/nope')).json()).toEqual({ success: false, error: 'Pipeline/nope not found' });
    const bad = await get('/v1/reconciler/objects/Widget/x');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^kind must be one of Client, Dashboard/);
    t.write('connections/wh.yaml', wh('BI_WH'));
    await t.sync();
    for (const url of ['/v1/reconciler/objects/Connection/wh', '/v1/reconciler/objects/Connection/wh/history']) {
      const r = await get(url, member);
      expect(r.statusCode).toBe(403);
      expect(r.json()).toEqual({ success: false, error: 'Admin role required' });
    }
    const r = await t.app.inject({ method: 'POST', url: '/v1/reconciler/objects/Connection/wh/rollback', headers: member, payload: { version: 1 } });
    expect(r.statusCode).toBe(403);
  });

  it('history in directory mode: applied versions and audit entries; rollback writes a version back through the write path, audited', async () => {
    t.write('connections/wh.yaml', wh('ONE_WH'));
    await t.sync();
    t.write('connections/wh.yaml', wh('TWO_WH'));
    await t.sync();
    const h = (await get('/v1/reconciler/objects/Connection/wh/history')).json().history;
    expect(h.mode).toBe('directory');
    expect(h.rollback.possible).toBe(true);
    expect(h.rollback.reason).toMatch(/older history needs git mode/);
    expect(h.versions.map((v: { version: number; current: boolean }) => [v.version, v.current])).toEqual([[2, true], [1, false]]);
    expect(h.audit.filter((e: { action: string }) => e.action === 'apply')).toHaveLength(2);
    expect(h.revisions).toEqual([]);

    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/objects/Connection/wh/rollback', headers: admin, payload: { version: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, key: 'Connection/wh', to: 'version 1', phase: 'Synced' });
    expect((t.rt.db.prepare("SELECT warehouse FROM connections WHERE manifest_key = 'Connection/wh'").get() as { warehouse: string }).warehouse).toBe('ONE_WH');
    const after = (await get('/v1/reconciler/objects/Connection/wh')).json().object;
    expect(after).toMatchObject({ inSync: true, applied: { version: 3 } });
    expect(after.desired.spec.warehouse).toBe('ONE_WH');
    const again = (await get('/v1/reconciler/objects/Connection/wh/history')).json().history;
    expect(again.audit[0]).toMatchObject({ action: 'rollback', object: { kind: 'Connection', id: 'wh' }, result: 'ok', actor: { type: 'user' } });
  });

  it('rollback: 400 naming the field for a bad body, 404 for a version not kept, 400 for a revision outside git mode', async () => {
    t.write('connections/wh.yaml', wh('ONE_WH'));
    await t.sync();
    const post = (payload: unknown) => t.app.inject({ method: 'POST', url: '/v1/reconciler/objects/Connection/wh/rollback', headers: admin, payload: payload as object });
    const zero = await post({ version: 0 });
    expect(zero.statusCode).toBe(400);
    expect(zero.json().error).toBe('version must be an integer ≥ 1');
    expect((await post({})).json().error).toBe('version is required');
    expect((await post({ colour: 'red' })).json().error).toMatch(/^colour is not a field/);
    const missing = await post({ version: 9 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe('Connection/wh has no applied version 9');
    const rev = await post({ revision: 'abcdef1' });
    expect(rev.statusCode).toBe(400);
    expect(rev.json().error).toMatch(/^revision needs git mode/);
    // Reverting a whole commit (bictl rollback) needs git mode too.
    const revert = await t.app.inject({ method: 'POST', url: '/v1/reconciler/rollback', headers: admin, payload: { revision: 'abcdef1' } });
    expect(revert.statusCode).toBe(409);
    expect(revert.json().error).toMatch(/^Reverting a commit needs git mode/);
    const badRev = await t.app.inject({ method: 'POST', url: '/v1/reconciler/rollback', headers: admin, payload: { revision: 'HEAD~1' } });
    expect(badRev.json().error).toBe('revision must be a commit SHA (7 to 40 hex digits)');
  });

  it('a ClientSet-generated object: desired from its generator, no rollback (change the set)', async () => {
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: inputs('ACME') }));
    await t.sync();
    const row = t.rt.reconciler.status.list().find((r) => r.generatedBy === 'ClientSet/retail');
    expect(row).toBeDefined();
    const o = (await get(`/v1/reconciler/objects/${row?.kind}/${row?.name}`)).json().object;
    expect(o).toMatchObject({ source: 'generated', generatedBy: 'ClientSet/retail', path: null, inSync: true });
    const h = (await get(`/v1/reconciler/objects/${row?.kind}/${row?.name}/history`)).json().history;
    expect(h).toMatchObject({ mode: 'generated', rollback: { possible: false } });
    const r = await t.app.inject({ method: 'POST', url: `/v1/reconciler/objects/${row?.kind}/${row?.name}/rollback`, headers: admin, payload: { version: 1 } });
    expect(r.statusCode).toBe(409);
    expect(r.json().error).toMatch(/generated by ClientSet\/retail/);
  });
});

describe('objects API (git mode)', () => {
  let remote: Remote;
  let g: GitTestRuntime;
  let t: TestApp;
  afterEach(async () => {
    await t.app.close();
    await g.stop();
    remote.dispose();
  });

  it('history lists the file’s commits; rollback to a revision commits that version as the caller', async () => {
    remote = warehouseRemote();
    const first = remote.head();
    remote.write('manifests/connections/wh.yaml', { ...connection('wh', 'Warehouse renamed') });
    const second = remote.push('rename the warehouse');
    g = await makeGitRuntime({ url: remote.url });
    t = await withApp({ rt: g.rt } as unknown as Parameters<typeof withApp>[0], await buildApp({ runtime: g.rt }));
    const admin = (await loginAs(t, { role: 'admin', username: 'gina' })).headers;
    const h = (await t.app.inject({ url: '/v1/reconciler/objects/Connection/wh/history', headers: admin })).json().history;
    expect(h.mode).toBe('git');
    expect(h.rollback.possible).toBe(true);
    expect(h.revisions.map((r: { revision: string }) => r.revision)).toEqual([second, first]);
    expect(h.revisions[0]).toMatchObject({ subject: 'rename the warehouse', author: 'Hanna Human <hanna@example.com>', applied: true });
    expect((await t.app.inject({ url: '/v1/reconciler/objects/Connection/wh', headers: admin })).json().object).toMatchObject({ source: 'git', lastAppliedRevision: second, inSync: true });

    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/objects/Connection/wh/rollback', headers: admin, payload: { revision: first } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ success: true, to: first, phase: 'Synced' });
    const [top] = remote.log();
    expect(top).toMatch(/\|gina <.*>\|rollback Connection\/wh to /);
    expect((g.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get() as { name: string }).name).toBe('Warehouse');
    const unknown = await t.app.inject({ method: 'POST', url: '/v1/reconciler/objects/Connection/wh/rollback', headers: admin, payload: { revision: '0000000' } });
    expect(unknown.statusCode).toBe(404);

    // bictl rollback over the API: reverting the rename changes nothing now (the rollback undid it) …
    const nothing = await t.app.inject({ method: 'POST', url: '/v1/reconciler/rollback', headers: admin, payload: { revision: second } });
    expect(nothing.json()).toMatchObject({ success: true, revision: second, revert: null });
    // … reverting the rollback commit is a new commit by the caller, applied.
    const rollbackCommit = top.split('|')[0];
    const reverted = await t.app.inject({ method: 'POST', url: '/v1/reconciler/rollback', headers: admin, payload: { revision: rollbackCommit } });
    expect(reverted.statusCode).toBe(200);
    expect(reverted.json()).toMatchObject({ success: true, revision: rollbackCommit, branch: 'main', failed: [], applied: ['Connection/wh'] });
    expect((g.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get() as { name: string }).name).toBe('Warehouse renamed');
    expect(reverted.json().revert).toMatch(/^[0-9a-f]{40}$/);
    expect(remote.log()[0]).toMatch(new RegExp(`^${reverted.json().revert}\\|gina <`));
    const audit = g.rt.db.prepare("SELECT actor_type, object_kind FROM audit_log WHERE action = 'rollback' ORDER BY seq").all();
    expect(audit).toEqual([{ actor_type: 'user', object_kind: 'Connection' }, { actor_type: 'user', object_kind: null }, { actor_type: 'user', object_kind: null }]);
  });
});
