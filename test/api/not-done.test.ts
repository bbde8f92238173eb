import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { statusOf } from '../../api/errors.ts';
import type { ReconcileResult } from '../../controller/reconciler/types.ts';
import { createUserWithKey, loginAs } from '../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../helpers/runtime.ts';

const FULL = () => new Database.SqliteError('database or disk is full', 'SQLITE_FULL');

/** 503 means not done: a write the store cannot take is withdrawn before the answer; a full disk is never a 500. */
describe('503 means not done', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await t?.close();
  });

  const dashboards = () => (t && existsSync(join(t.manifests, 'dashboards')) ? readdirSync(join(t.manifests, 'dashboards')) : []);

  it('an import the store cannot take is withdrawn before the 503: nothing applies it later, the retry is the one write', async () => {
    t = await makeTestApp();
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: 'D2026A00001', name: 'Warehouse' }));
    await t.sync();
    const { headers } = await createUserWithKey(t, { role: 'admin' });
    const payload = { name: 'Sales', dataSource: { dbId: 'D2026A00001' }, charts: [{ type: 'kpi', measures: ['revenue'], dimensions: [] }] };
    // The store fails as the written file is reconciled (disk full): nothing could be recorded.
    vi.spyOn(t.rt.reconciler, 'reconcileFile').mockImplementationOnce(async (file): Promise<ReconcileResult> => {
      expect(dashboards()).toEqual([file.path.slice('dashboards/'.length)]);
      return {
        key: 'Dashboard/Sales',
        kind: 'Dashboard',
        name: 'Sales',
        phase: 'Failed',
        reason: 'store',
        message: 'Dashboard/Sales could not be applied yet (database or disk is full); it is retried',
        resourceIds: {},
        retryAfterMs: 1000,
      };
    });
    const refused = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers, payload });
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toEqual({ success: false, error: 'Dashboard/Sales could not be applied yet (database or disk is full); it is retried' });
    expect(dashboards()).toEqual([]);
    // A full sync (or the watcher) finds nothing to apply.
    await t.sync();
    expect(t.rt.db.prepare("SELECT COUNT(*) AS n FROM facades WHERE name = 'Sales'").get()).toEqual({ n: 0 });
    const retried = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers, payload });
    expect(retried.statusCode).toBe(201);
    await t.sync();
    expect(t.rt.db.prepare("SELECT COUNT(*) AS n FROM facades WHERE name = 'Sales'").get()).toEqual({ n: 1 });
    expect(dashboards()).toHaveLength(1);
  });

  it('key creation on a full disk answers 503 with what happened, never a 500', async () => {
    t = await makeTestApp();
    const admin = await loginAs(t, { role: 'admin' });
    vi.spyOn(t.rt.auth, 'createKey').mockImplementation(() => {
      throw FULL();
    });
    const res = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${admin.userId}`, headers: { cookie: admin.cookie, ctn: admin.csrfToken }, payload: { label: 'ci' } });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ success: false, error: 'The store cannot take writes now (database or disk is full); retry later' });
  });

  it('maps every full-disk and busy-store code to 503 in the one place errors map to HTTP', () => {
    for (const code of ['SQLITE_FULL', 'SQLITE_BUSY', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY', 'ENOSPC', 'EFBIG', 'EDQUOT']) {
      expect(statusOf(Object.assign(new Error(code), { code })), code).toBe(503);
    }
    expect(statusOf(Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT_UNIQUE' }))).toBe(500);
    expect(statusOf(new Error('a bug'))).toBe(500);
  });
});
