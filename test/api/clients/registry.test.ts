import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUserWithKey, loginAs, type TestKey, type TestSession } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { CONNECTION_ID, CORE_MODEL_ID, onboardingPackage, packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';

describe('client registry: listing, single read, export', () => {
  let t: TestApp;
  let key: TestKey;
  let admin: TestSession;
  beforeEach(async () => {
    t = await makeTestApp();
    writeCoreModel(t);
    await t.sync();
    key = await createUserWithKey(t);
    admin = await loginAs(t);
  });
  afterEach(async () => t.close());

  const onboard = async (pkg: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: key.headers, payload: pkg });
    t.clock.advance(1000);
    return res;
  };
  const get = (path: string, headers: Record<string, string> = admin.headers) => t.app.inject({ method: 'GET', url: path, headers });
  const list = (query = '') => get(`/v1/bi/admin/clients/${admin.userId}${query}`);

  it('lists nothing with total 0 and totalPages 0', async () => {
    const res = await list();
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, data: [], pagination: { page: 1, limit: 100, total: 0, totalPages: 0 } });
  });

  it('lists records with exactly the fields of 4.5, newest first', async () => {
    await onboard(packageWithDashboard('ACME'));
    await onboard(onboardingPackage('GLOBEX', { connectionId: 'D2026A00007' }));
    await onboard(onboardingPackage('INITECH', { coreModelId: 'SM2026A00042', connectionId: 'D2026A00008' })); // fails: FAILED audit entry
    const res = await list();
    expect(res.json()).toEqual({
      success: true,
      data: [
        {
          clientId: 'INITECH',
          clientName: 'INITECH Retail',
          dbId: 'D2026A00008',
          modelId: null,
          vdmId: null,
          facadeId: null,
          experimentIds: [],
          coreModelId: 'SM2026A00042',
          status: 'FAILED',
          onboardedBy: key.userId,
          onboardedDate: '2026-03-01T10:00:02.000Z',
        },
        {
          clientId: 'GLOBEX',
          clientName: 'GLOBEX Retail',
          dbId: 'D2026A00007',
          modelId: 'SM2026A00003',
          vdmId: 'V2026A00003',
          facadeId: null,
          experimentIds: [],
          coreModelId: CORE_MODEL_ID,
          status: 'ACTIVE',
          onboardedBy: key.userId,
          onboardedDate: '2026-03-01T10:00:01.000Z',
        },
        {
          clientId: 'ACME',
          clientName: 'ACME Retail',
          dbId: CONNECTION_ID,
          modelId: 'SM2026A00002',
          vdmId: 'V2026A00001',
          facadeId: 'F2026A00001',
          experimentIds: ['E2026A00001', 'E2026A00002'],
          coreModelId: CORE_MODEL_ID,
          status: 'ACTIVE',
          onboardedBy: key.userId,
          onboardedDate: '2026-03-01T10:00:00.000Z',
        },
      ],
      pagination: { page: 1, limit: 100, total: 3, totalPages: 1 },
    });
  });

  it('pages: limit 1, a page past the end, status filter, stable order among equal dates', async () => {
    for (const [i, id] of ['C', 'A', 'B'].entries()) {
      await t.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: key.headers, payload: onboardingPackage(id, { connectionId: `D2026A0001${i}` }) });
    }
    const ids = async (q: string) => (await list(q)).json().data.map((c: { clientId: string }) => c.clientId);
    // Same onboardedDate: ties go by clientId.
    expect(await ids('')).toEqual(['A', 'B', 'C']);
    const first = await list('?limit=1');
    expect(first.json().data.map((c: { clientId: string }) => c.clientId)).toEqual(['A']);
    expect(first.json().pagination).toEqual({ page: 1, limit: 1, total: 3, totalPages: 3 });
    expect(await ids('?limit=1&page=3')).toEqual(['C']);
    const past = await list('?limit=2&page=9');
    expect(past.json()).toEqual({ success: true, data: [], pagination: { page: 9, limit: 2, total: 3, totalPages: 2 } });
    expect((await list('?status=FAILED')).json().pagination.total).toBe(0);
    expect((await list('?status=active&limit=2')).json().pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2 });
  });

  it('searches clientId or clientName with a case-insensitive regular expression', async () => {
    await onboard(onboardingPackage('ACME', { clientName: 'Acme Retail' }));
    await onboard(onboardingPackage('GLOBEX', { clientName: 'Globex Corporation', connectionId: 'D2026A00007' }));
    await onboard(onboardingPackage('ACME2', { clientName: 'Second shop', connectionId: 'D2026A00008' }));
    const ids = async (search: string, extra = '') =>
      (await list(`?search=${encodeURIComponent(search)}${extra}`)).json().data.map((c: { clientId: string }) => c.clientId);
    expect(await ids('acme')).toEqual(['ACME2', 'ACME']);
    expect(await ids('^acme$')).toEqual(['ACME']);
    expect(await ids('corp')).toEqual(['GLOBEX']);
    expect(await ids('retail|shop')).toEqual(['ACME2', 'ACME']);
    expect(await ids('acme', '&limit=1&page=2')).toEqual(['ACME']);
    const res = await list(`?search=${encodeURIComponent('acme')}&limit=1`);
    expect(res.json().pagination).toEqual({ page: 1, limit: 1, total: 2, totalPages: 2 });
  });

  it('sorts by a column in either direction (with and without a search or a status), ties by clientId', async () => {
    await onboard(onboardingPackage('ACME', { clientName: 'zeta shop' }));
    await onboard(onboardingPackage('GLOBEX', { clientName: 'Alpha corp', connectionId: 'D2026A00007' }));
    await onboard(onboardingPackage('BETA', { clientName: 'mid shop', connectionId: 'D2026A00008' }));
    const ids = async (q: string) => (await list(q)).json().data.map((c: { clientId: string }) => c.clientId);
    expect(await ids('?sort=clientId')).toEqual(['ACME', 'BETA', 'GLOBEX']);
    expect(await ids('?sort=clientId&order=desc')).toEqual(['GLOBEX', 'BETA', 'ACME']);
    expect(await ids('?sort=clientName')).toEqual(['GLOBEX', 'BETA', 'ACME']);
    expect(await ids('?sort=clientName&order=desc&limit=1&page=2')).toEqual(['BETA']);
    expect(await ids('?sort=clientName&search=shop')).toEqual(['BETA', 'ACME']);
    expect(await ids('?sort=clientId&order=desc&status=ACTIVE&limit=2')).toEqual(['GLOBEX', 'BETA']);
    expect(await ids('?sort=onboardedDate')).toEqual(await ids(''));
    const bad = await list('?sort=secret&order=up');
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toBe('order must be asc or desc; sort must be one of clientId, clientName, status, onboardedDate');
  });

  it('answers bad query values with 400 naming the field', async () => {
    const cases: [string, string][] = [
      ['?page=0', 'page must be a positive integer'],
      ['?page=abc', 'page must be a positive integer'],
      ['?limit=1001', 'limit must be an integer from 1 to 1000'],
      ['?limit=-1', 'limit must be an integer from 1 to 1000'],
      ['?status=GONE', 'status must be one of ACTIVE, FAILED, SUSPENDED, OFFBOARDED, DELETED'],
      ['?page=1&page=2', 'page must be given once'],
    ];
    for (const [q, error] of cases) {
      const res = await list(q);
      expect(res.statusCode, q).toBe(400);
      expect(res.json(), q).toEqual({ success: false, error, code: 'validation', problems: expect.any(Array) });
    }
    const bad = await list(`?search=${encodeURIComponent('(unclosed')}`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^search is not a valid regular expression: /);
  });

  it('bounds a pathological pattern instead of stalling, and keeps serving', async () => {
    await onboard(onboardingPackage('ZED', { clientName: `${'a'.repeat(40)}!` }));
    const res = await list(`?search=${encodeURIComponent('(a+)+$')}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, error: 'search pattern is too expensive to evaluate (over 250 ms)', code: 'validation', problems: expect.any(Array) });
    // The same pattern where it matches quickly, and an ordinary search, still answer.
    expect((await list(`?search=${encodeURIComponent('^zed$')}`)).json().pagination.total).toBe(1);
    expect((await list(`?search=${encodeURIComponent('a{40}!$')}`)).json().pagination.total).toBe(1);
  });

  it('reads one client with every single-read field of 2.2; unknown is a 404', async () => {
    await onboard(packageWithDashboard('ACME', { description: 'Example tenant' }));
    const res = await get(`/v1/bi/admin/clients/acme/${admin.userId}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      client: {
        clientId: 'ACME',
        clientName: 'ACME Retail',
        description: 'Example tenant',
        dbId: CONNECTION_ID,
        modelId: 'SM2026A00002',
        vdmId: 'V2026A00001',
        facadeId: 'F2026A00001',
        experimentIds: ['E2026A00001', 'E2026A00002'],
        coreModelId: CORE_MODEL_ID,
        status: 'ACTIVE',
        onboardedBy: key.userId,
        onboardedDate: '2026-03-01T10:00:00.000Z',
        lastModifiedDate: '2026-03-01T10:00:00.000Z',
        isActive: true,
        isDeleted: false,
      },
    });
    const missing = await get(`/v1/bi/admin/clients/NOPE/${admin.userId}`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ success: false, error: 'Client NOPE not found' });
  });

  it('shows the failing step and reason of a FAILED entry', async () => {
    await onboard(onboardingPackage('INITECH', { coreModelId: 'SM2026A00042' }));
    const res = await get(`/v1/bi/admin/clients/INITECH/${admin.userId}`);
    expect(res.json().client).toMatchObject({
      status: 'FAILED',
      isActive: false,
      isDeleted: false,
      failedStep: 'create model',
      failureReason: 'core model SM2026A00042 does not exist',
    });
  });

  it('members read only the clients granted to them; others answer like unknown clients', async () => {
    await onboard(onboardingPackage('ACME'));
    const member = await loginAs(t, { role: 'member' });
    const list = await get(`/v1/bi/admin/clients/${member.userId}`, member.headers);
    expect([list.statusCode, list.json().data]).toEqual([200, []]);
    for (const path of ['/ACME', '/ACME/export']) {
      const res = await get(`/v1/bi/admin/clients${path}/${member.userId}`, member.headers);
      expect([res.statusCode, res.json()], path).toEqual([404, { success: false, error: 'Client ACME not found' }]);
    }
    t.rt.auth.users.grant(member.userId, ['ACME'], 'test');
    expect((await get(`/v1/bi/admin/clients/${member.userId}`, member.headers)).json().data.map((c: { clientId: string }) => c.clientId)).toEqual(['ACME']);
    for (const path of ['/ACME', '/ACME/export']) expect((await get(`/v1/bi/admin/clients${path}/${member.userId}`, member.headers)).statusCode, path).toBe(200);
    expect((await get(`/v1/bi/admin/clients/${admin.userId}`, {})).statusCode).toBe(401);
  });

  it('exports the onboarding package that recreates an equal client in a fresh instance', async () => {
    const pkg = packageWithDashboard('ACME', { description: 'Example tenant', externalIdKey: 'employee_id', security: { enabled: false } });
    await onboard(pkg);
    const exported = await get(`/v1/bi/admin/clients/ACME/export/${admin.userId}`);
    expect(exported.statusCode).toBe(200);
    const body = exported.json();
    expect(body).toMatchObject({
      clientId: 'ACME',
      clientName: 'ACME Retail',
      description: 'Example tenant',
      connectionId: CONNECTION_ID,
      coreModelId: CORE_MODEL_ID,
      externalIdKey: 'employee_id',
      security: { enabled: false },
    });
    expect(body.vdm).toHaveLength(2);
    expect(body.dashboards[0].sections.map((s: { name: string }) => s.name)).toEqual(['Summary', 'By region']);

    const fresh = await makeTestApp();
    try {
      writeCoreModel(fresh);
      await fresh.sync();
      const freshKey = await createUserWithKey(fresh);
      const freshAdmin = await loginAs(fresh);
      const created = await fresh.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: freshKey.headers, payload: body });
      expect(created.statusCode).toBe(201);
      const again = await fresh.app.inject({ method: 'GET', url: `/v1/bi/admin/clients/ACME/export/${freshAdmin.userId}`, headers: freshAdmin.headers });
      expect(again.json()).toEqual(body);
      const original = (await get(`/v1/bi/admin/clients/ACME/${admin.userId}`)).json().client;
      const copy = (await fresh.app.inject({ method: 'GET', url: `/v1/bi/admin/clients/ACME/${freshAdmin.userId}`, headers: freshAdmin.headers })).json().client;
      const { onboardedBy: _a, ...a } = original;
      const { onboardedBy: _b, ...b } = copy;
      expect(b).toEqual(a);
      // The stored charts are the same too.
      const charts = (x: TestApp) => x.rt.db.prepare('SELECT section, top_section, category, charts FROM experiments ORDER BY position').all();
      expect(charts(fresh)).toEqual(charts(t));
    } finally {
      await fresh.close();
    }
  });

  it('exports: unknown client 404, a FAILED one 409', async () => {
    const missing = await get(`/v1/bi/admin/clients/NOPE/export/${admin.userId}`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ success: false, error: 'Client NOPE not found' });
    await onboard(onboardingPackage('INITECH', { coreModelId: 'SM2026A00042' }));
    const failed = await get(`/v1/bi/admin/clients/INITECH/export/${admin.userId}`);
    expect(failed.statusCode).toBe(409);
    expect(failed.json()).toEqual({ success: false, error: 'Client INITECH is FAILED: only an ACTIVE client can be exported' });
  });
});
