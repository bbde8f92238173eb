import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { migrate, readMigrations } from '../../../controller/store/migrate.ts';
import { MIGRATIONS_DIR } from '../../../controller/store/db.ts';
import { createUserWithKey, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { CONNECTION_ID, packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';

/** A dashboard created by onboarding is stored, read and re-imported like any imported dashboard. */
describe('GET /v1/sdk/dashboards/{facadeId} of a dashboard created by onboarding', () => {
  let t: TestApp;
  let admin: TestKey;
  let facadeId: string;
  beforeEach(async () => {
    t = await makeTestApp();
    writeCoreModel(t);
    await t.sync();
    admin = await createUserWithKey(t);
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: admin.headers, payload: packageWithDashboard('ACME') });
    expect(res.statusCode).toBe(201);
    [facadeId] = res.json().client.facadeIds;
  });
  afterEach(async () => t.close());

  const get = (headers: Record<string, string>, id = facadeId) => t.app.inject({ method: 'GET', url: `/v1/sdk/dashboards/${id}`, headers });

  it('answers 200 to a key scoped to the client, with a body that imports again', async () => {
    const scoped = await createUserWithKey(t, { clientId: 'ACME', role: 'member' });
    const res = await get(scoped.headers);
    expect(res.statusCode).toBe(200);
    const { dashboard } = res.json();
    expect(dashboard).toMatchObject({
      facadeId,
      name: 'Sales overview',
      description: 'Revenue at a glance',
      dataSource: { dbId: CONNECTION_ID, vdmId: 'V2026A00001', connType: 'VDM' },
      layout: { columns: 2, chartHeight: '380px', kpiHeight: '180px', chartWidth: '100%' },
      templateType: 'standard',
      layoutTemplateName: 'two-column',
      category: [],
      tags: ['sales'],
      isPublic: true,
    });
    expect(dashboard.sections.map((s: { name: string; topSection: boolean }) => [s.name, s.topSection])).toEqual([
      ['Summary', true],
      ['By region', false],
    ]);
    expect(dashboard.sections[0].charts.map((c: { type: string }) => c.type)).toEqual(['CH00055', 'CH00055']);

    const again = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers: scoped.headers, payload: dashboard });
    expect(again.statusCode, again.body).toBe(201);
    const copy = (await get(scoped.headers, again.json().facadeId)).json().dashboard;
    const strip = (d: Record<string, unknown>) => {
      const { facadeId: _f, createdAt: _c, updatedAt: _u, createdBy: _b, tags: _t, sections, ...rest } = d;
      return { ...rest, sections: (sections as { experimentId: string }[]).map(({ experimentId: _e, ...s }) => s) };
    };
    expect(strip(copy)).toEqual(strip(dashboard));
    expect(copy.tags).toEqual(['sales', 'sdk-import']);
  });

  it('answers 404 to a key scoped to another client, as for an unknown dashboard', async () => {
    const other = await createUserWithKey(t, { clientId: 'GLOBEX', role: 'member' });
    const res = await get(other.headers);
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ success: false, error: `Dashboard ${facadeId} not found` });
    expect((await get(other.headers, 'F2026A09999')).json()).toEqual({ success: false, error: 'Dashboard F2026A09999 not found' });
  });

  it('migration 0012 turns a facade stored in the old onboarding shape into the one shape', async () => {
    const before = (await get(admin.headers)).json();
    const row = t.rt.db.prepare('SELECT definition FROM facades WHERE facade_id = ?').get(facadeId) as { definition: string };
    const current = JSON.parse(row.definition);
    const old = {
      layoutTemplate: 'two-column',
      templateType: 'standard',
      layoutTemplateName: 'two-column',
      category: current.package.category ?? [],
      tags: current.tags,
      package: current.package,
    };
    t.rt.db.prepare('UPDATE facades SET definition = ? WHERE facade_id = ?').run(JSON.stringify(old), facadeId);
    t.rt.db.prepare('DELETE FROM schema_migrations WHERE version = 12').run();
    expect(migrate(t.rt.db, readMigrations(MIGRATIONS_DIR))).toEqual([12]);
    const migrated = t.rt.db.prepare('SELECT definition FROM facades WHERE facade_id = ?').get(facadeId) as { definition: string };
    expect(migrated.definition).toBe(row.definition); // byte for byte what the writer writes: a re-apply changes nothing
    expect((await get(admin.headers)).json()).toEqual(before);
  });
});
