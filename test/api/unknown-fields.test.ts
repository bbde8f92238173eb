import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../controller/config.ts';
import { createUserWithKey, loginAs } from '../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../helpers/runtime.ts';

const DB = 'D2026A00001';
const typos = {
  name: 'Typos',
  descripton: 'sales by region',
  tagz: ['sales'],
  dataSource: { dbId: DB },
  charts: [{ title: 'By region', type: 'column', measures: ['revenue'], dimensions: ['region'], colour: '#ff0000' }],
};

async function setup(strict = false): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'bi-unknown-'));
  const config = loadConfig(strict ? { BI_STRICT_MANIFESTS: 'true' } : {}, {
    manifestsDir: join(dir, 'manifests'),
    dbPath: join(dir, 'data', 'bi.sqlite'),
    dataDir: join(dir, 'data'),
  });
  const t = await makeTestApp({ dir, config });
  t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: DB, name: 'Warehouse' }));
  await t.sync();
  return t;
}

describe('unknown fields', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('an API write answers its unknown fields as `warnings` (with the nearest known name) and keeps them', async () => {
    t = await setup();
    const { headers } = await createUserWithKey(t);
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers, payload: typos });
    expect(res.statusCode).toBe(201);
    expect(res.json().warnings).toEqual([
      'charts[0].colour is an unknown field',
      'descripton is an unknown field (did you mean description?)',
      'tagz is an unknown field (did you mean tags?)',
    ]);
    const clean = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers, payload: { ...typos, name: 'Clean', descripton: undefined, tagz: undefined, charts: [{ ...typos.charts[0], colour: undefined }] } });
    expect(clean.statusCode).toBe(201);
    expect(clean.json()).not.toHaveProperty('warnings');
  });

  it('the status of a manifest file shows its unknown fields, across a restart, and drops them once fixed', async () => {
    t = await setup();
    t.write('dashboards/typos.yaml', { ...manifest('Dashboard', 'typos', typos), metadata: { name: 'typos', lables: { team: 'sales' } } });
    await t.sync();
    const session = await loginAs(t, { role: 'admin' });
    const read = async () => {
      const res = await t.app.inject({ url: '/v1/reconciler/status?kind=Dashboard', headers: session.headers });
      return res.json().items as { key: string; phase: string; warnings?: string[] }[];
    };
    expect(await read()).toMatchObject([
      {
        key: 'Dashboard/typos',
        phase: 'Synced',
        warnings: [
          'metadata.lables is an unknown field (did you mean labels?)',
          'spec.charts[0].colour is an unknown field',
          'spec.descripton is an unknown field (did you mean description?)',
          'spec.tagz is an unknown field (did you mean tags?)',
        ],
      },
    ]);
    // Unchanged files are not read again after a restart: the warnings were kept in the store.
    const dir = t.dir;
    await t.app.close();
    await t.rt.stop();
    t = await makeTestApp({ dir, config: loadConfig({}, { manifestsDir: join(dir, 'manifests'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') }) });
    const again = await loginAs(t, { role: 'admin', username: 'admin2' });
    const after = await t.app.inject({ url: '/v1/reconciler/status?kind=Dashboard', headers: again.headers });
    expect(after.json().items[0].warnings).toHaveLength(4);
    t.write('dashboards/typos.yaml', manifest('Dashboard', 'typos', { name: 'Typos', dataSource: { dbId: DB }, charts: [typos.charts[0]].map(({ colour: _c, ...c }) => c) }));
    await t.sync();
    const fixed = await t.app.inject({ url: '/v1/reconciler/status?kind=Dashboard', headers: again.headers });
    expect(fixed.json().items[0]).not.toHaveProperty('warnings');
  });

  it('with BI_STRICT_MANIFESTS=true an unknown field is an error: the file is Invalid, the API answers 400', async () => {
    t = await setup(true);
    t.write('dashboards/typos.yaml', manifest('Dashboard', 'typos', typos));
    await t.sync();
    expect(t.rt.reconciler.status.get('Dashboard/typos')).toBeUndefined();
    expect(t.rt.reconciler.status.get('File/dashboards/typos.yaml')).toMatchObject({
      phase: 'Invalid',
      reason: 'schema',
      message: 'spec.charts[0].colour is an unknown field; spec.descripton is an unknown field (did you mean description?); spec.tagz is an unknown field (did you mean tags?)',
    });
    const { headers } = await createUserWithKey(t);
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers, payload: typos });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('descripton is an unknown field (did you mean description?)');
  });
});
