import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { loginAs, type TestSession } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';
import { publicGitUrl } from '../../../api/routes/reconciler.ts';
import { clientManifest, count, onboardingPackage, packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';

/**
 * The console's tenant endpoints: a client's resources, offboarding through its manifest,
 * retry now, the dashboards list and the session read of a dashboard; tenancy as everywhere
 * (admins all, members their granted clients read-only, another tenant's IDs answer 404).
 */

const ACME_DB = 'D2026A00001';
const GLOBEX_DB = 'D2026A00002';

let t: TestApp;
let admin: TestSession;
let member: TestSession;

const get = (s: TestSession, url: string) => t.app.inject({ method: 'GET', url, headers: s.headers });
const post = (s: TestSession, url: string, payload: unknown) => t.app.inject({ method: 'POST', url, headers: s.headers, payload: payload as object });

beforeEach(async () => {
  t = await makeTestApp();
  writeCoreModel(t);
  t.write('clients/ACME.yaml', clientManifest(packageWithDashboard('ACME', { connectionId: ACME_DB })));
  t.write('clients/GLOBEX.yaml', clientManifest(packageWithDashboard('GLOBEX', { connectionId: GLOBEX_DB })));
  await t.sync();
  t.write('pipelines/acme.yaml', manifest('Pipeline', 'acme', {
    name: 'ACME nightly',
    source: { connectionId: ACME_DB, type: 'database' },
    destination: { connectionId: ACME_DB },
    steps: [{ type: 'load', config: { tableName: 't' } }],
  }));
  await t.sync();
  admin = await loginAs(t, { username: 'root', role: 'admin' });
  member = await loginAs(t, { username: 'mia', role: 'member', clients: ['ACME'] });
});
afterEach(async () => t.close());

describe('GET /v1/bi/admin/clients/{clientId}/resources/{userId}', () => {
  it("names the client's connection, model, VDMs with columns, dashboards with charts, pipelines, manifests and what offboarding prunes", async () => {
    const res = await get(admin, `/v1/bi/admin/clients/acme/resources/${admin.userId}`);
    expect(res.statusCode).toBe(200);
    const j = res.json();
    expect(j.clientId).toBe('ACME');
    expect(j.status).toBe('ACTIVE');
    expect(j.connection).toMatchObject({ connectionId: ACME_DB, shared: false, manifestKey: 'Client/ACME' });
    expect(j.model).toMatchObject({ coreModelId: 'SM2026A00001', name: 'ACME Retail' });
    expect(j.vdms.map((v: { name: string }) => v.name)).toEqual(['Sales', 'Customers']);
    expect(j.vdms[0].columns).toEqual(['region', 'product', 'order_date', 'revenue']);
    expect(j.vdms[0].calculations).toEqual(['Total revenue']);
    expect(j.dashboards).toHaveLength(1);
    expect(j.dashboards[0].sections.map((s: { name: string; charts: unknown[] }) => [s.name, s.charts.length])).toEqual([['Summary', 2], ['By region', 1]]);
    expect(j.dashboards[0].sections[1].charts[0]).toMatchObject({ title: 'Revenue by region', type: 'CH00011' });
    expect(j.pipelines).toEqual([expect.objectContaining({ name: 'ACME nightly', manifestKey: 'Pipeline/acme' })]);
    expect(j.manifests.map((m: { key: string; phase: string }) => `${m.key}:${m.phase}`).sort()).toEqual(['Client/ACME:Synced', 'Pipeline/acme:Synced']);
    expect(j.offboard.removes).toEqual({ client: 'ACME', connectionId: ACME_DB, modelId: j.model.modelId, vdmIds: j.vdms.map((v: { vdmId: string }) => v.vdmId), facadeIds: [j.dashboards[0].facadeId] });
    expect(j.offboard.keeps).toEqual({ connectionId: null, pipelineIds: [j.pipelines[0].pipelineId], facadeIds: [] });
  });

  it("shows a member their granted client and answers another tenant's client as unknown (404)", async () => {
    expect((await get(member, `/v1/bi/admin/clients/ACME/resources/${member.userId}`)).statusCode).toBe(200);
    const other = await get(member, `/v1/bi/admin/clients/GLOBEX/resources/${member.userId}`);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ success: false, error: 'Client GLOBEX not found' });
    expect((await get(admin, `/v1/bi/admin/clients/NOPE/resources/${admin.userId}`)).json()).toEqual({ success: false, error: 'Client NOPE not found' });
  });
});

describe('POST /v1/bi/admin/clients/{clientId}/offboard/{userId}', () => {
  it('refuses without the typed client ID, writing nothing', async () => {
    const res = await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'GLOBEX' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('confirm must repeat the client ID ACME');
    expect(existsSync(join(t.manifests, 'clients/ACME.yaml'))).toBe(true);
  });

  it('withdraws the manifest: the client is OFFBOARDED with retainUntil, every resource kept until its purge', async () => {
    const res = await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'acme' });
    expect(res.statusCode).toBe(200);
    const j = res.json();
    expect(j).toMatchObject({ clientId: 'ACME', status: 'OFFBOARDED', manifest: { key: 'Client/ACME', phase: 'Pruned' } });
    expect(existsSync(join(t.manifests, 'clients/ACME.yaml'))).toBe(false);
    const db = t.rt.db;
    expect(count(db, 'facades', 'client_id = ?', 'ACME')).toBe(1);
    expect(count(db, 'vdms', 'client_id = ?', 'ACME')).toBe(2);
    expect(count(db, 'semantic_models', 'client_id = ?', 'ACME')).toBe(1);
    // `removed` names what its purge will remove (the connection its onboarding created, nothing else uses it).
    expect(j.removed.removes.connectionId).toBe(ACME_DB);
    expect(count(db, 'connections', 'connection_id = ?', ACME_DB)).toBe(1);
    expect(count(db, 'pipelines', 'manifest_key = ?', 'Pipeline/acme')).toBe(1);
    const read = await get(admin, `/v1/bi/admin/clients/ACME/${admin.userId}`);
    expect(read.json().client).toMatchObject({ status: 'OFFBOARDED', isActive: false, isDeleted: false, retainUntil: '2026-03-31T10:00:00.000Z' });
    // Done once: a second offboarding has no manifest left to withdraw.
    const again = await post(admin, `/v1/bi/admin/clients/ACME/offboard/${admin.userId}`, { confirm: 'ACME' });
    expect(again.statusCode).toBe(409);
  });

  it('is for admins: a member gets 403 and nothing changes', async () => {
    const res = await post(member, `/v1/bi/admin/clients/ACME/offboard/${member.userId}`, { confirm: 'ACME' });
    expect(res.statusCode).toBe(403);
    expect(existsSync(join(t.manifests, 'clients/ACME.yaml'))).toBe(true);
  });
});

describe('POST /v1/reconciler/retry', () => {
  it('reconciles a failed manifest again now: fixed meanwhile, it is Synced', async () => {
    t.write('clients/NEWCO.yaml', clientManifest(onboardingPackage('NEWCO', { connectionId: 'D2026A00005', coreModelId: 'SM2026A00009' })));
    await t.sync();
    expect(t.rt.reconciler.status.get('Client/NEWCO')?.phase).toBe('Failed');
    const failed = await post(admin, '/v1/reconciler/retry', { key: 'Client/NEWCO' });
    expect(failed.json()).toMatchObject({ success: true, key: 'Client/NEWCO', phase: 'Failed', reason: 'create model' });
    // The core model appears (no sync runs); the retry applies at once, no backoff waited for.
    t.rt.db.prepare("INSERT INTO core_models (model_id, name, created_at, updated_at) VALUES ('SM2026A00009', 'Late core', 'x', 'x')").run();
    const res = await post(admin, '/v1/reconciler/retry', { key: 'Client/NEWCO' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ key: 'Client/NEWCO', phase: 'Synced', reason: null });
  });

  it('answers 404 for an unknown key, 400 without a key, 403 for a member', async () => {
    expect((await post(admin, '/v1/reconciler/retry', { key: 'Client/NOPE' })).json()).toEqual({ success: false, error: 'Manifest Client/NOPE not found' });
    expect((await post(admin, '/v1/reconciler/retry', {})).statusCode).toBe(400);
    expect((await post(member, '/v1/reconciler/retry', { key: 'Client/ACME' })).statusCode).toBe(403);
  });
});

describe('dashboards for the console', () => {
  it('lists every dashboard for an admin, a client filter narrows; a member sees their clients only', async () => {
    const all = (await get(admin, `/v1/bi/admin/dashboards/${admin.userId}`)).json();
    expect(all.dashboards.map((d: { owner: string }) => d.owner).sort()).toEqual(['ACME', 'GLOBEX']);
    const globex = (await get(admin, `/v1/bi/admin/dashboards/${admin.userId}?clientId=globex`)).json();
    expect(globex.dashboards.map((d: { owner: string }) => d.owner)).toEqual(['GLOBEX']);
    const mine = (await get(member, `/v1/bi/admin/dashboards/${member.userId}`)).json();
    expect(mine.dashboards.map((d: { owner: string }) => d.owner)).toEqual(['ACME']);
    expect((await get(member, `/v1/bi/admin/dashboards/${member.userId}?clientId=GLOBEX`)).json().dashboards).toEqual([]);
  });

  it('reads a dashboard with its grid by session; another tenant\'s answers 404', async () => {
    const all = (await get(admin, `/v1/bi/admin/dashboards/${admin.userId}`)).json();
    const acme = all.dashboards.find((d: { owner: string }) => d.owner === 'ACME').facadeId;
    const globex = all.dashboards.find((d: { owner: string }) => d.owner === 'GLOBEX').facadeId;
    const res = await get(member, `/v1/sdk/dashboards/${acme}/${member.userId}`);
    expect(res.statusCode).toBe(200);
    const charts = res.json().dashboard.sections[0].charts;
    expect(charts.map((c: { grid: unknown }) => c.grid)).toEqual([{ x: 0, y: 0, width: 3, height: 6 }, { x: 3, y: 0, width: 3, height: 6 }]);
    const other = await get(member, `/v1/sdk/dashboards/${globex}/${member.userId}`);
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ success: false, error: `Dashboard ${globex} not found` });
  });
});

describe('POST /v1/bi/admin/connections/{connectionId}/test/{userId}', () => {
  it("tests a stored connection with what is stored and keeps the result as the client's last test", async () => {
    expect((await get(admin, `/v1/bi/admin/clients/ACME/resources/${admin.userId}`)).json().connection.lastTest).toBeNull();
    const res = await post(admin, `/v1/bi/admin/connections/${ACME_DB}/test/${admin.userId}`, {});
    expect(res.statusCode).toBe(200);
    // Onboarding recorded no account URL for it: the test says so without any network.
    const test = { ok: false, message: 'An account URL such as https://<account>.snowflakecomputing.com is required', durationMs: expect.any(Number), at: expect.any(String), by: admin.userId };
    expect(res.json().connection.lastTest).toEqual(test);
    expect((await get(member, `/v1/bi/admin/clients/ACME/resources/${member.userId}`)).json().connection.lastTest).toEqual(test);
  });

  it('sends no stored password to another target than it was stored for, and records why', async () => {
    t.rt.db.prepare("INSERT INTO secrets (secret_id, label, iv, ciphertext, tag, key_id, target, created_at, updated_at) VALUES ('s1', '', 'x', 'x', 'x', 'k', ?, 'x', 'x')")
      .run(JSON.stringify({ vendor: 'POSTGRESQL', host: 'db.example', port: 5432, database: 'prod', username: 'bi' }));
    t.write('connections/pg.yaml', manifest('Connection', 'pg', { connectionId: 'D2026A00077', name: 'Elsewhere', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 9, database: 'prod', username: 'bi', secretRef: 'secret:s1' }));
    await t.sync();
    const res = await post(admin, `/v1/bi/admin/connections/D2026A00077/test/${admin.userId}`, {});
    const test = res.json().connection.lastTest;
    expect(test.ok).toBe(false);
    expect(test.message).toMatch(/^Not tested, no password was sent: Connection D2026A00077: .*stored for/);
    expect(test.durationMs).toBe(0);
  });

  it('is for admins; an unknown connection answers 404', async () => {
    expect((await post(member, `/v1/bi/admin/connections/${ACME_DB}/test/${member.userId}`, {})).statusCode).toBe(403);
    expect((await post(admin, `/v1/bi/admin/connections/D2026A09999/test/${admin.userId}`, {})).json()).toEqual({ success: false, error: 'Connection D2026A09999 not found' });
  });
});

describe('GET /v1/reconciler/status source', () => {
  it('names the manifests folder in directory mode', async () => {
    const j = (await get(admin, '/v1/reconciler/status')).json();
    expect(j.source).toEqual({ type: 'directory', location: t.manifests });
  });
});

describe('publicGitUrl', () => {
  it('leaves credentials out of a git URL and other URLs as they are', () => {
    expect(publicGitUrl('https://bot:s3cret@git.example.com/org/manifests.git')).toBe('https://git.example.com/org/manifests.git');
    expect(publicGitUrl('https://git.example.com/org/manifests.git')).toBe('https://git.example.com/org/manifests.git');
    expect(publicGitUrl('git@git.example.com:org/manifests.git')).toBe('git@git.example.com:org/manifests.git');
    expect(publicGitUrl('/srv/git/manifests.git')).toBe('/srv/git/manifests.git');
  });
});
