import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUserWithKey, type TestKey } from '../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../helpers/runtime.ts';
import { onboardingPackage, writeCoreModel } from '../controller/kinds/client/fixtures.ts';

const DB = 'D2026A00001';

describe('file names that differ only by case', () => {
  let t: TestApp;
  let key: TestKey;
  beforeEach(async () => {
    t = await makeTestApp();
    writeCoreModel(t);
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: DB, name: 'Warehouse' }));
    await t.sync();
    key = await createUserWithKey(t);
  });
  afterEach(async () => t.close());

  it('an import never picks a name that differs only by case from an existing file (one file on macOS and Windows)', async () => {
    t.write('dashboards/regional-sales.yaml', manifest('Dashboard', 'regional-sales', { name: 'Regional sales', dataSource: { dbId: DB }, charts: [{ type: 'kpi', measures: ['revenue'], dimensions: [] }] }));
    await t.sync();
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers: key.headers, payload: { name: 'Regional Sales', dataSource: { dbId: DB }, charts: [{ type: 'kpi', measures: ['revenue'], dimensions: [] }] } });
    expect(res.statusCode).toBe(201);
    expect(readdirSync(join(t.manifests, 'dashboards')).sort()).toEqual(['Regional-Sales-2.yaml', 'regional-sales.yaml']);
  });

  it('a write to a path that differs only by case from an existing file is refused with 400, nothing written', async () => {
    t.write('clients/acme.yaml', manifest('CoreModel', 'hand-written', { name: 'Hand written' }));
    await t.sync();
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: key.headers, payload: onboardingPackage('ACME') as object });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      error: 'clients/ACME.yaml differs only by case from the existing clients/acme.yaml (one file on macOS and Windows): choose another name',
      code: 'validation',
      problems: expect.any(Array),
    });
    expect(readdirSync(join(t.manifests, 'clients'))).toEqual(['acme.yaml']);
  });
});
