import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { createUserWithKey, loginAs, type TestKey, type TestSession } from '../../helpers/auth.ts';
import { FakeEngine } from '../../helpers/fake-engine.ts';
import { makeTestApp, manifest, withApp, type TestApp } from '../../helpers/runtime.ts';
import { buildApp } from '../../../api/app.ts';
import { clientManifest, count, packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';
import { ClientPurge, PurgeInterrupted } from '../../../controller/usecases/purge-client.ts';

/**
 * Tenant lifecycle through the API (docs/contract/design.md, "Tenant lifecycle"): suspend/resume/restore write
 * the manifest through the one write path; a held client's keys, members, schedules and runs are
 * refused; purge after retention, resumable after a crash.
 */

const ACME_DB = 'D2026A00001';
// The fake clock starts at 2026-03-01T10:00:00Z; the schedule fires at 10:30.
const hourly = { isEnabled: true, frequency: 'hourly', startTime: '10:30' };

let t: TestApp;
let engine: FakeEngine;
let admin: TestSession;
let member: TestSession;
let acmeKey: TestKey;

const post = (s: TestSession, url: string, payload: unknown = {}) => t.app.inject({ method: 'POST', url, headers: s.headers, payload: payload as object });
const get = (s: TestSession, url: string) => t.app.inject({ method: 'GET', url, headers: s.headers });
const pipelineOf = (name: string) => (t.rt.db.prepare('SELECT pipeline_id FROM pipelines WHERE manifest_key = ?').get(`Pipeline/${name}`) as { pipeline_id: string }).pipeline_id;
const facadeOf = (clientId: string) => (t.rt.db.prepare('SELECT facade_id FROM facades WHERE owner_client_id = ?').get(clientId) as { facade_id: string }).facade_id;
const registry = (clientId = 'ACME') => t.rt.db.prepare('SELECT status, is_active, is_deleted, retain_until FROM clients WHERE client_id = ?').get(clientId);

async function setup(opts: { hold?: boolean } = {}): Promise<void> {
  engine = new FakeEngine({ hold: opts.hold });
  t = await makeTestApp({ engine });
  writeCoreModel(t);
  t.write('clients/ACME.yaml', clientManifest(packageWithDashboard('ACME', { connectionId: ACME_DB })));
  await t.sync();
  for (const name of ['a1', 'a2', 'a3']) {
    t.write(`pipelines/${name}.yaml`, manifest('Pipeline', name, {
      name: `ACME ${name}`,
      source: { connectionId: ACME_DB, type: 'database' },
      destination: { connectionId: ACME_DB },
      steps: [{ type: 'load', config: { tableName: 't' } }],
      ...(name === 'a3' ? { schedule: hourly } : {}),
    }));
  }
  await t.sync();
  await t.rt.runs.schedules.settled();
  admin = await loginAs(t, { username: 'root', role: 'admin' });
  member = await loginAs(t, { username: 'mia', role: 'member', clients: ['ACME'] });
  acmeKey = await createUserWithKey(t, { role: 'member', clientId: 'ACME', username: 'acme-bot' });
}
afterEach(async () => t?.close());

describe('suspend and resume', () => {
  it("writes spec.suspended to the manifest; the tenant's key, member session, schedule and manual run are refused, queued runs cancelled; resume is immediate", async () => {
    await setup({ hold: true });
    const facade = facadeOf('ACME');
    // Two runs hold the two run slots; the third waits queued.
    const runs = [];
    for (const name of ['a1', 'a2']) runs.push((await post(admin, `/v1/sdk/pipelines/${pipelineOf(name)}/runs/${admin.userId}`)).json().run.runId as string);
    const queued = (await t.app.inject({ method: 'POST', url: `/v1/sdk/pipelines/${pipelineOf('a3')}/runs`, headers: acmeKey.headers })).json().run;
    expect(queued.status).toBe('queued');

    const res = await post(admin, `/v1/bi/admin/clients/acme/suspend/${admin.userId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, clientId: 'ACME', status: 'SUSPENDED' });
    expect(parse(readFileSync(join(t.manifests, 'clients/ACME.yaml'), 'utf8')).spec.suspended).toBe(true);
    expect(registry()).toEqual({ status: 'SUSPENDED', is_active: 0, is_deleted: 0, retain_until: null });
    await t.rt.runs.dispatcher.wait(queued.runId);
    expect(t.rt.runs.store.get(queued.runId)?.status).toBe('cancelled');

    // The key and the member: 403 naming the state; the registry read still shows the client.
    const byKey = await t.app.inject({ method: 'GET', url: `/v1/sdk/dashboards/${facade}`, headers: acmeKey.headers });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json()).toEqual({ success: false, error: 'Client ACME is suspended' });
    const bySession = await get(member, `/v1/sdk/dashboards/${facade}/${member.userId}`);
    expect(bySession.statusCode).toBe(403);
    expect(bySession.json().error).toBe('Client ACME is suspended');
    const read = await get(member, `/v1/bi/admin/clients/ACME/${member.userId}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().client).toMatchObject({ status: 'SUSPENDED', isActive: false });
    const listed = await get(admin, `/v1/bi/admin/clients/${admin.userId}?status=suspended`);
    expect(listed.json().data.map((c: { clientId: string }) => c.clientId)).toEqual(['ACME']);

    // A manual run, even an admin's: 409. The schedule's fire at 10:30 starts nothing.
    for (const r of runs) engine.release(r);
    await t.rt.runs.dispatcher.idle();
    const manual = await post(admin, `/v1/sdk/pipelines/${pipelineOf('a1')}/runs/${admin.userId}`);
    expect(manual.statusCode).toBe(409);
    expect(manual.json()).toEqual({ success: false, message: 'Client ACME is suspended' });
    const before = count(t.rt.db, 'pipeline_runs');
    t.clock.advance(31 * 60_000);
    t.scheduler.fireAll();
    await t.rt.runs.schedules.settled();
    expect(count(t.rt.db, 'pipeline_runs')).toBe(before);

    // Resume: at once, the same key works again.
    const resumed = await post(admin, `/v1/bi/admin/clients/ACME/resume/${admin.userId}`);
    expect(resumed.json()).toEqual({ success: true, clientId: 'ACME', status: 'ACTIVE' });
    expect(parse(readFileSync(join(t.manifests, 'clients/ACME.yaml'), 'utf8')).spec.suspended).toBeUndefined();
    expect((await t.app.inject({ method: 'GET', url: `/v1/sdk/dashboards/${facade}`, headers: acmeKey.headers })).statusCode).toBe(200);
  });

  it('is for admins; an unknown client answers 404', async () => {
    await setup();
    expect((await post(member, `/v1/bi/admin/clients/ACME/suspend/${member.userId}`)).statusCode).toBe(403);
    const unknown = await post(admin, `/v1/bi/admin/clients/NOPE/suspend/${admin.userId}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ success: false, error: 'Client NOPE not found' });
    expect(registry()).toMatchObject({ status: 'ACTIVE' });
  });
});

describe('offboard and restore', () => {
  it("keeps every ID: the offboarded client's key gets 403, restore brings it back ACTIVE with the same IDs", async () => {
    await setup();
    const facade = facadeOf('ACME');
    const refs = t.rt.reconciler.status.get('Client/ACME')?.resourceIds;
    expect((await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'ACME' })).statusCode).toBe(200);
    const byKey = await t.app.inject({ method: 'GET', url: `/v1/sdk/dashboards/${facade}`, headers: acmeKey.headers });
    expect(byKey.statusCode).toBe(403);
    expect(byKey.json().error).toBe('Client ACME is offboarded');
    expect((await post(admin, `/v1/sdk/pipelines/${pipelineOf('a1')}/runs/${admin.userId}`)).statusCode).toBe(409);
    // Restore is for OFFBOARDED clients only; resume is not.
    expect((await post(admin, `/v1/bi/admin/clients/ACME/resume/${admin.userId}`)).statusCode).toBe(409);
    const restored = await post(admin, `/v1/bi/admin/clients/ACME/restore/${admin.userId}`);
    expect(restored.statusCode).toBe(200);
    expect(restored.json()).toEqual({ success: true, clientId: 'ACME', status: 'ACTIVE' });
    expect(t.rt.reconciler.status.get('Client/ACME')?.resourceIds).toEqual(refs);
    expect(facadeOf('ACME')).toBe(facade);
    expect((await t.app.inject({ method: 'GET', url: `/v1/sdk/dashboards/${facade}`, headers: acmeKey.headers })).statusCode).toBe(200);
    expect((await post(admin, `/v1/bi/admin/clients/ACME/restore/${admin.userId}`)).statusCode).toBe(409);
  });
});

describe('purge', () => {
  const purge = (body: unknown) => post(admin, `/v1/bi/admin/clients/ACME/purge/${admin.userId}`, body);

  it('needs OFFBOARDED, the typed ID and the retention passed (or force); removes everything but the DELETED record', async () => {
    await setup();
    expect((await purge({ confirm: 'ACME' })).statusCode).toBe(409);
    await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'ACME' });
    const wrong = await purge({ confirm: 'GLOBEX' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().error).toContain('confirm');
    const early = await purge({ confirm: 'ACME' });
    expect(early.statusCode).toBe(409);
    expect(early.json().error).toBe('Client ACME is retained until 2026-03-31T10:00:00.000Z: purge it then, or force it as an admin');
    t.clock.advance(30 * 24 * 3_600_000);
    const scrape = await t.rt.metrics.registry.metrics();
    expect(scrape).toContain('bi_clients{status="OFFBOARDED"} 1');
    expect(scrape).toContain('bi_client_purges_pending 1');
    admin = await loginAs(t, { username: 'root2', role: 'admin' });
    const appliedKeys = () => (t.rt.db.prepare('SELECT DISTINCT key FROM applied_manifests ORDER BY key').all() as { key: string }[]).map((r) => r.key);
    expect(appliedKeys()).toEqual(['Client/ACME', 'CoreModel/core-SM2026A00001', 'Pipeline/a1', 'Pipeline/a2', 'Pipeline/a3']);
    const res = await purge({ confirm: 'acme' });
    // The applied versions of the client's manifests (its configuration) go with it; the shared core model's stay.
    expect(appliedKeys()).toEqual(['CoreModel/core-SM2026A00001']);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.status).toBe('DELETED');
    expect(body.removes.map((r: { kind: string }) => r.kind).sort()).toEqual(['connection', 'dashboard', 'key', 'model', 'pipeline', 'pipeline', 'pipeline', 'vdm', 'vdm']);
    const db = t.rt.db;
    for (const [table, where] of [['semantic_models', 'client_id'], ['vdms', 'client_id'], ['facades', 'owner_client_id'], ['pipelines', 'owner_client_id'], ['api_keys', 'client_id'], ['connections', 'owner_client_id']]) {
      expect(count(db, table, `${where} = ?`, 'ACME')).toBe(0);
    }
    expect(registry()).toEqual({ status: 'DELETED', is_active: 0, is_deleted: 1, retain_until: null });
    const read = await get(admin, `/v1/bi/admin/clients/ACME/${admin.userId}`);
    expect(read.json().client).toMatchObject({ status: 'DELETED', isDeleted: true, isActive: false });
    // The pipeline files are withdrawn: the next sync brings nothing back.
    await t.sync();
    expect(count(db, 'pipelines')).toBe(0);
    expect((await purge({ confirm: 'ACME' })).statusCode).toBe(409);
  });

  it('force purges before the date; BI_PURGE_DRY_RUN answers what it would remove and removes nothing', async () => {
    await setup();
    await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'ACME' });
    (t.rt.config as { purgeDryRun: boolean }).purgeDryRun = true;
    const logged = vi.spyOn(t.rt.log, 'info');
    const dry = await purge({ confirm: 'ACME', force: true });
    // BI_PURGE_DRY_RUN also logs what the purge would remove.
    expect(logged).toHaveBeenCalledWith(
      expect.objectContaining({ clientId: 'ACME', removes: expect.arrayContaining([`connection/${ACME_DB}`]) }),
      expect.stringContaining('dry run'),
    );
    logged.mockRestore();
    expect(dry.statusCode).toBe(200);
    expect(dry.json()).toMatchObject({ success: true, clientId: 'ACME', dryRun: true });
    expect(dry.json().removes).toContainEqual({ kind: 'connection', id: ACME_DB });
    expect(registry()).toMatchObject({ status: 'OFFBOARDED' });
    expect(count(t.rt.db, 'vdms', 'client_id = ?', 'ACME')).toBe(2);
    (t.rt.config as { purgeDryRun: boolean }).purgeDryRun = false;
    expect((await purge({ confirm: 'ACME', force: 'yes' })).statusCode).toBe(400);
    const forced = await purge({ confirm: 'ACME', force: true });
    expect(forced.statusCode).toBe(200);
    expect(registry()).toMatchObject({ status: 'DELETED' });
  });

  it('a purge killed halfway finishes on restart', async () => {
    await setup();
    await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'ACME' });
    const crashing = new ClientPurge({ runtime: t.rt, crashAfter: 'dashboards' });
    await expect(crashing.purge('ACME', { confirm: 'ACME', force: true }, { userId: admin.userId, username: 'root', role: 'admin', via: 'session' })).rejects.toBeInstanceOf(
      PurgeInterrupted,
    );
    expect(count(t.rt.db, 'facades', 'owner_client_id = ?', 'ACME')).toBe(0);
    expect(count(t.rt.db, 'vdms', 'client_id = ?', 'ACME')).toBe(2);
    expect(registry()).toMatchObject({ status: 'OFFBOARDED' });
    await t.app.close();
    const restarted = await t.restart();
    t = await withApp(restarted, await buildApp({ runtime: restarted.rt }));
    expect(count(t.rt.db, 'vdms', 'client_id = ?', 'ACME')).toBe(0);
    expect(count(t.rt.db, 'connections', 'owner_client_id = ?', 'ACME')).toBe(0);
    expect(registry()).toEqual({ status: 'DELETED', is_active: 0, is_deleted: 1, retain_until: null });
    expect(t.rt.db.prepare('SELECT steps_done, finished_at IS NOT NULL AS done FROM client_purges').get()).toEqual({
      steps_done: JSON.stringify(['runs', 'manifests', 'pipelines', 'dashboards', 'model', 'keys', 'connection', 'registry']),
      done: 1,
    });
  });
});
