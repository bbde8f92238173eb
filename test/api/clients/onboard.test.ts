import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUserWithKey, loginAs, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { createClientApplier } from '../../../controller/kinds/client/applier.ts';
import { defaultAppliers } from '../../../controller/kinds/index.ts';
import {
  CONNECTION_ID,
  CORE_MODEL_ID,
  assertWholeClients,
  count,
  onboardingPackage,
  packageWithDashboard,
  snapshot,
  writeCoreModel,
} from '../../controller/kinds/client/fixtures.ts';

const URL = '/v1/sdk/client/onboard';

describe('POST /v1/sdk/client/onboard', () => {
  let t: TestApp;
  let key: TestKey;
  beforeEach(async () => {
    t = await makeTestApp();
    writeCoreModel(t);
    await t.sync();
    key = await createUserWithKey(t);
  });
  afterEach(async () => t.close());

  const post = (payload: unknown, headers = key.headers, url = URL) => t.app.inject({ method: 'POST', url, headers, payload: payload as object });

  it('onboards a new client: 201 COMPLETED with exactly the client fields of 4.1', async () => {
    const res = await post(packageWithDashboard());
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      success: true,
      status: 'COMPLETED',
      client: {
        clientId: 'ACME',
        clientName: 'ACME Retail',
        connectionId: CONNECTION_ID,
        modelId: 'SM2026A00002',
        vdmIds: ['V2026A00001', 'V2026A00002'],
        facadeIds: ['F2026A00001'],
        experimentIds: ['E2026A00001', 'E2026A00002'],
        coreModelId: CORE_MODEL_ID,
        status: 'ACTIVE',
        onboardedBy: key.userId,
        onboardedDate: '2026-03-01T10:00:00.000Z',
      },
    });
    // The desired state is a manifest like any other, with the caller recorded.
    const written = parse(readFileSync(join(t.manifests, 'clients/ACME.yaml'), 'utf8'));
    expect(written.kind).toBe('Client');
    expect(written.metadata.name).toBe('ACME');
    expect(written.metadata.annotations['bi.controller/requested-by']).toBe(key.userId);
    expect(written.spec.clientId).toBe('ACME');
    expect(t.rt.reconciler.status.get('Client/ACME')?.phase).toBe('Synced');
    expect(assertWholeClients(t.rt.db)).toEqual([]);
  });

  it('uppercases clientId, keeps the VDM defaults of 2.3 and every configuration as given', async () => {
    const pkg = packageWithDashboard('acme-eu');
    const res = await post(pkg);
    expect(res.statusCode).toBe(201);
    expect(res.json().client.clientId).toBe('ACME-EU');
    expect(existsSync(join(t.manifests, 'clients/ACME-EU.yaml'))).toBe(true);
    const vdms = t.rt.db.prepare('SELECT name, published, config FROM vdms ORDER BY position').all() as { name: string; published: number; config: string }[];
    expect(vdms.map((v) => [v.name, v.published])).toEqual([
      ['Sales', 1],
      ['Customers', 1],
    ]);
    const given = (pkg.vdm as Record<string, unknown>[])[0];
    expect(JSON.parse(vdms[0].config)).toEqual({ ...given, vendor: 'SNOWFLAKE', sourceType: 'bi_semantic_model' });
    expect(JSON.parse(vdms[1].config)).toMatchObject({ vendor: 'SNOWFLAKE', sourceType: 'bi_semantic_model', securityEnabled: false });
    const model = t.rt.db.prepare('SELECT core_model_id, security_enabled FROM semantic_models').get();
    expect(model).toEqual({ core_model_id: CORE_MODEL_ID, security_enabled: 1 });
  });

  it('lists every validation problem with the exact texts of docs/contract/api.md §7, writing nothing', async () => {
    const before = snapshot(t.rt.db);
    const res = await post({});
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      error:
        'Validation failed: clientId is required; clientName is required; connectionId is required; coreModelId is required; At least one VDM config is required in the package',
      code: 'validation',
      problems: expect.any(Array),
    });
    for (const vdm of [[], 'x', null, { name: 'a' }]) {
      const r = await post(onboardingPackage('ACME', { vdm }));
      expect(r.json()).toEqual({ success: false, error: 'Validation failed: At least one VDM config is required in the package', code: 'validation', problems: expect.any(Array) });
    }
    const typed = await post(onboardingPackage('ACME', { clientName: '', vdm: [{ name: 'v', securityEnabled: 'yes' }] }));
    expect(typed.json()).toEqual({ success: false, error: 'Validation failed: clientName is required; vdm[0].securityEnabled must be boolean', code: 'validation', problems: expect.any(Array) });
    const badId = await post(onboardingPackage('ACME/../x'));
    expect(badId.json()).toEqual({
      success: false,
      error: 'Validation failed: clientId must be 1 to 64 of A-Z 0-9 _ - starting with a letter or digit',
      code: 'validation',
      problems: expect.any(Array),
    });
    const dupes = await post(onboardingPackage('ACME', { vdm: [{ name: 'A' }, { name: 'A' }] }));
    expect(dupes.json()).toEqual({ success: false, error: 'Validation failed: vdm[1].name "A" is also the name of vdm[0]', code: 'validation', problems: expect.any(Array) });
    const charts = packageWithDashboard('ACME');
    const section = (charts.dashboards as { sections: { charts: Record<string, unknown>[] }[] }[])[0].sections[0];
    section.charts[0].type = 'pie-chart-3d';
    section.charts[1].grid = { width: 13 };
    const chartProblems = await post(charts);
    expect(chartProblems.json()).toEqual({
      success: false,
      error:
        'Validation failed: dashboards[0].sections[0].charts[1].grid.width must be <= 12; ' +
        'dashboards[0].sections[0].charts[0].type "pie-chart-3d" is not a chart type: use a name or CH code of GET /v1/sdk/chart-types',
      code: 'validation',
      problems: expect.any(Array),
    });
    delete section.charts[1].grid;
    const chartType = await post(charts);
    expect(chartType.json()).toEqual({
      success: false,
      error:
        'Validation failed: dashboards[0].sections[0].charts[0].type "pie-chart-3d" is not a chart type: use a name or CH code of GET /v1/sdk/chart-types',
      code: 'validation',
      problems: expect.any(Array),
    });
    const notObject = await post([1, 2]);
    expect(notObject.json()).toEqual({ success: false, error: 'Validation failed: body must be object', code: 'validation', problems: expect.any(Array) });
    expect(snapshot(t.rt.db)).toEqual(before);
    expect(existsSync(join(t.manifests, 'clients'))).toBe(false);
  });

  it('answers 200 ALREADY_EXISTS for an ACTIVE client and writes nothing', async () => {
    const first = await post(onboardingPackage());
    const file = readFileSync(join(t.manifests, 'clients/ACME.yaml'), 'utf8');
    const before = snapshot(t.rt.db);
    t.clock.advance(60_000);
    const again = await post(onboardingPackage('acme', { clientName: 'Other name' }));
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ success: true, status: 'ALREADY_EXISTS', client: first.json().client });
    expect(snapshot(t.rt.db)).toEqual(before);
    expect(readFileSync(join(t.manifests, 'clients/ACME.yaml'), 'utf8')).toBe(file);
  });

  it('refuses a key scoped to another tenant (403) and accepts one scoped to this client', async () => {
    const other = await createUserWithKey(t, { clientId: 'GLOBEX' });
    const res = await post(onboardingPackage('ACME'), other.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ success: false, error: 'API key is scoped to client GLOBEX' });
    expect(count(t.rt.db, 'clients')).toBe(0);
    const own = await createUserWithKey(t, { clientId: 'acme' });
    expect((await post(onboardingPackage('acme'), own.headers)).statusCode).toBe(201);
  });

  it('refuses another client\'s connection to everyone (409), writing nothing: no manifest, no registry entry', async () => {
    await post(onboardingPackage('ACME'));
    const admin = await loginAs(t);
    const partner = await createUserWithKey(t, { role: 'member', clientId: 'GLOBEX' });
    const scoped = await createUserWithKey(t, { clientId: 'GLOBEX' });
    const before = snapshot(t.rt.db);
    for (const [headers, url] of [
      [key.headers, URL],
      [scoped.headers, URL],
      [partner.headers, URL],
      [admin.headers, `${URL}/${admin.userId}`],
      [partner.headers, `${URL}?dryRun=true`],
    ] as const) {
      const res = await post(onboardingPackage('GLOBEX', { connectionId: CONNECTION_ID }), headers, url);
      expect([res.statusCode, res.json()], url).toEqual([409, { success: false, error: `Connection ${CONNECTION_ID} belongs to another client` }]);
    }
    expect(existsSync(join(t.manifests, 'clients/GLOBEX.yaml'))).toBe(false);
    expect(snapshot(t.rt.db)).toEqual(before);
    expect(t.rt.reconciler.status.get('Client/GLOBEX')).toBeUndefined();
    // Its own new connection is fine, through a key scoped to it and granted to the member.
    const own = await post(onboardingPackage('GLOBEX', { connectionId: 'D2026A00002' }), partner.headers);
    expect([own.statusCode, own.json().client.connectionId]).toEqual([201, 'D2026A00002']);
  });

  it('a member onboards only through a key scoped to a client granted to them', async () => {
    const ungranted = await createUserWithKey(t, { role: 'member', username: 'mo' });
    const res = await post(onboardingPackage('ACME'), ungranted.headers);
    expect([res.statusCode, res.json()]).toEqual([403, { success: false, error: 'Client ACME is not granted to mo' }]);
    expect(count(t.rt.db, 'clients')).toBe(0);
  });

  it('requires a key (401) and, on the session path, an admin (403)', async () => {
    expect((await post(onboardingPackage(), {})).json()).toEqual({ error: 'API key required' });
    const member = await loginAs(t, { role: 'member' });
    const denied = await post(onboardingPackage(), member.headers, `${URL}/${member.userId}`);
    expect(denied.statusCode).toBe(403);
    const admin = await loginAs(t);
    const ok = await post(onboardingPackage(), admin.headers, `${URL}/${admin.userId}`);
    expect(ok.statusCode).toBe(201);
    expect(ok.json().client.onboardedBy).toBe(admin.userId);
  });

  it('answers a failed step with 422 FAILED, withdraws the manifest and keeps only the audit entry', async () => {
    const before = snapshot(t.rt.db, ['connections', 'semantic_models', 'vdms', 'facades', 'experiments', 'id_sequences']);
    const res = await post(onboardingPackage('ACME', { coreModelId: 'SM2026A00009' }));
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({
      success: false,
      status: 'FAILED',
      error: 'create model: core model SM2026A00009 does not exist',
      client: {
        clientId: 'ACME',
        clientName: 'ACME Retail',
        connectionId: CONNECTION_ID,
        modelId: null,
        vdmIds: [],
        facadeIds: [],
        experimentIds: [],
        coreModelId: 'SM2026A00009',
        status: 'FAILED',
        onboardedBy: key.userId,
        onboardedDate: '2026-03-01T10:00:00.000Z',
      },
    });
    expect(existsSync(join(t.manifests, 'clients/ACME.yaml'))).toBe(false);
    expect(t.rt.reconciler.status.get('Client/ACME')).toBeUndefined();
    expect(snapshot(t.rt.db, ['connections', 'semantic_models', 'vdms', 'facades', 'experiments', 'id_sequences'])).toEqual(before);
    // A retry timer of the withdrawn manifest finds nothing to do.
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(count(t.rt.db, 'semantic_models')).toBe(0);
    // Onboarding again with the fix turns the FAILED entry ACTIVE.
    t.clock.advance(1000);
    const fixed = await post(onboardingPackage('ACME'));
    expect(fixed.statusCode).toBe(201);
    expect(fixed.json().client).toMatchObject({ status: 'ACTIVE', onboardedDate: '2026-03-01T10:00:01.000Z' });
  });

  it('fails the dashboard step (422) for a chart field the first VDM does not have', async () => {
    const pkg = packageWithDashboard('ACME');
    const dashboards = pkg.dashboards as { sections: { charts: Record<string, unknown>[] }[] }[];
    dashboards[0].sections[1].charts[0].dimensions = ['customer_id']; // a column of the second VDM only
    const res = await post(pkg);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe('deploy dashboard: dashboards[0].sections[1].charts[0].dimensions[0] "customer_id" is not a column of the VDM');
    expect(res.json().client.status).toBe('FAILED');
    expect(assertWholeClients(t.rt.db)).toEqual([]);
    expect(count(t.rt.db, 'vdms') + count(t.rt.db, 'facades') + count(t.rt.db, 'connections')).toBe(0);
  });

  it('fails the dashboard step (422) for a sum of a column the core model types as text, and for a measure that is its own dimension', async () => {
    t.write(`core-models/${CORE_MODEL_ID}.yaml`, {
      apiVersion: 'bi.controller/v1',
      kind: 'CoreModel',
      metadata: { name: `core-${CORE_MODEL_ID}` },
      spec: { modelId: CORE_MODEL_ID, name: 'Retail core', definition: { columns: [{ name: 'region', type: 'text' }, { name: 'revenue', type: 'number' }] } },
    });
    await t.sync();
    const pkg = onboardingPackage('ACME', {
      dashboards: [{ name: 'Overview', sections: [{ name: 'S', charts: [
        { title: 'Total region', type: 'kpi', measures: [{ field: 'region', aggregation: 'sum' }], dimensions: [] },
        { title: 'Revenue by revenue', type: 'bar', measures: [{ field: 'revenue', aggregation: 'sum' }], dimensions: ['revenue'] },
      ] }] }],
    });
    const res = await post(pkg);
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toBe(
      'deploy dashboard: dashboards[0].sections[0].charts[0].measures[0].field sum of "region", a text column: sum needs a number column (use count or distinct); ' +
        'dashboards[0].sections[0].charts[1].measures[0].field "revenue" is also a dimension of the chart: a measure must be another column (or count/distinct of it)',
    );
    expect(count(t.rt.db, 'facades')).toBe(0);
  });

  it('announces the manifest write as the first step event of an onboarding, before the apply\'s own steps', async () => {
    const steps: string[] = [];
    t.rt.reconciler.on('event', (e: { type: string; key: string; step?: string }) => {
      if (e.type === 'step' && e.key === 'Client/ACME') steps.push(e.step ?? '');
    });
    const res = await post(onboardingPackage('ACME'));
    expect(res.statusCode).toBe(201);
    expect(steps).toEqual(['write manifest', 'create connection', 'create model', 'publish vdm', 'deploy dashboard', 'register client']);
  });

  it('plans with ?dryRun=true: IDs shown as (new), nothing written', async () => {
    const before = snapshot(t.rt.db);
    const res = await post(packageWithDashboard('acme'), key.headers, `${URL}?dryRun=true`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      dryRun: true,
      status: 'DRY_RUN',
      plan: {
        clientId: 'ACME',
        clientName: 'acme Retail',
        coreModelId: CORE_MODEL_ID,
        connection: { connectionId: CONNECTION_ID, action: 'create' },
        modelId: '(new)',
        vdms: [
          { name: 'Sales', vdmId: '(new)', securityEnabled: true },
          { name: 'Customers', vdmId: '(new)', securityEnabled: false },
        ],
        dashboards: [
          {
            name: 'Sales overview',
            facadeId: '(new)',
            experiments: [
              { section: 'Summary', experimentId: '(new)', charts: 2 },
              { section: 'By region', experimentId: '(new)', charts: 1 },
            ],
          },
        ],
        steps: ['create connection', 'create model', 'publish vdm', 'deploy dashboard', 'register client'],
      },
    });
    expect(snapshot(t.rt.db)).toEqual(before);
    expect(existsSync(join(t.manifests, 'clients'))).toBe(false);
    const failing = await post(onboardingPackage('ACME', { coreModelId: 'SM2026A00009' }), key.headers, `${URL}?dryRun=true`);
    expect(failing.statusCode).toBe(422);
    expect(failing.json()).toEqual({ success: false, dryRun: true, status: 'FAILED', error: 'create model: core model SM2026A00009 does not exist' });
    expect(snapshot(t.rt.db)).toEqual(before);
  });

  it('gives ten simultaneous onboardings of one new client one 201, nine ALREADY_EXISTS and one set of resources', async () => {
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => post(packageWithDashboard(i % 2 ? 'acme' : 'ACME'))));
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const created = results.find((r) => r.statusCode === 201)?.json().client;
    for (const r of results.filter((x) => x.statusCode === 200)) expect(r.json()).toEqual({ success: true, status: 'ALREADY_EXISTS', client: created });
    expect(count(t.rt.db, 'clients')).toBe(1);
    expect(count(t.rt.db, 'semantic_models')).toBe(1);
    expect(count(t.rt.db, 'vdms')).toBe(2);
    expect(count(t.rt.db, 'facades')).toBe(1);
    expect(count(t.rt.db, 'experiments')).toBe(2);
    expect(count(t.rt.db, 'connections')).toBe(1);
  });
});

describe('a restart in the middle of a burst of onboardings', () => {
  it('never leaves half a client, and the written manifests converge after the restart', async () => {
    const t = await makeTestApp();
    writeCoreModel(t);
    await t.sync();
    const key = await createUserWithKey(t);
    const ids = Array.from({ length: 24 }, (_, i) => `BURST${i}`);
    let done = 0;
    let third: () => void = () => {};
    const thirdDone = new Promise<void>((resolve) => (third = resolve));
    const inflight = ids.map((id) =>
      t.app
        .inject({ method: 'POST', url: URL, headers: key.headers, payload: packageWithDashboard(id, { connectionId: `D2026A${String(100 + ids.indexOf(id)).padStart(5, '0')}` }) })
        .then((r) => r.statusCode)
        .catch(() => 0)
        .finally(() => ++done === 8 && third()),
    );
    // Let a third finish, then stop the process under the rest.
    await thirdDone;
    await t.app.close();
    const t2 = await t.restart();
    try {
      expect(assertWholeClients(t2.rt.db)).toEqual([]);
      await t2.sync();
      await t2.rt.reconciler.idle();
      expect(assertWholeClients(t2.rt.db)).toEqual([]);
      const codes = await Promise.all(inflight);
      expect(codes.filter((c) => c === 201).length).toBeGreaterThanOrEqual(8);
      // Every manifest that reached the folder is a whole ACTIVE client; the others left nothing.
      const active = (t2.rt.db.prepare("SELECT client_id FROM clients WHERE status = 'ACTIVE'").all() as { client_id: string }[]).map((r) => r.client_id);
      const files = ids.filter((id) => existsSync(join(t2.manifests, `clients/${id}.yaml`)));
      expect(active.sort()).toEqual(files.sort());
      expect(count(t2.rt.db, 'semantic_models')).toBe(files.length);
    } finally {
      await t2.close();
    }
  });
});

describe('POST /v1/sdk/client/onboard?dryRun=true: the reconciler\'s one dry run', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('plans through the registered Client applier: a step that would fail answers the onboarding\'s 422, nothing written', async () => {
    const appliers = defaultAppliers().map((a) => (a.kind === 'Client' ? createClientApplier({ failAt: 'deploy dashboard' }) : a));
    t = await makeTestApp({ appliers });
    writeCoreModel(t);
    await t.sync();
    const key = await createUserWithKey(t);
    const before = snapshot(t.rt.db);
    const dry = await t.app.inject({ method: 'POST', url: `${URL}?dryRun=true`, headers: key.headers, payload: packageWithDashboard('ACME') });
    expect([dry.statusCode, dry.json()]).toEqual([422, { success: false, dryRun: true, status: 'FAILED', error: 'deploy dashboard: injected failure' }]);
    expect(snapshot(t.rt.db)).toEqual(before);
    expect(existsSync(join(t.manifests, 'clients'))).toBe(false);
    // The real onboarding fails at the same step with the same text.
    const real = await t.app.inject({ method: 'POST', url: URL, headers: key.headers, payload: packageWithDashboard('ACME') });
    expect([real.statusCode, real.json().error]).toEqual([422, 'deploy dashboard: injected failure']);
  });
});
