import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../controller/config.ts';
import { loginAs, type TestSession } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';

const SECRET_KEY = 'c'.repeat(64);
const PG = { vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432, database: 'test', schema: 'public', username: 'postgres' };

let t: TestApp;
let admin: TestSession;
let member: TestSession;
beforeEach(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bi-connedit-'));
  const config = loadConfig({}, { manifestsDir: join(dir, 'manifests'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data'), secretKey: SECRET_KEY });
  t = await makeTestApp({ dir, config });
  admin = await loginAs(t, { role: 'admin' });
  member = await loginAs(t, { role: 'member' });
});
afterEach(async () => t.close());

async function create(payload: Record<string, unknown>): Promise<{ connectionId: string; secretRef?: string; path: string }> {
  const res = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${admin.userId}`, headers: admin.headers, payload });
  expect(res.statusCode).toBe(201);
  return res.json();
}
const patch = (id: string, payload: unknown, who = admin) => t.app.inject({ method: 'PATCH', url: `/v1/bi/admin/connections/${id}/${who.userId}`, headers: who.headers, payload: payload as object });
const del = (id: string, who = admin) => t.app.inject({ method: 'DELETE', url: `/v1/bi/admin/connections/${id}/${who.userId}`, headers: who.headers });
const fileOf = (path: string) => parse(readFileSync(join(t.manifests, path), 'utf8')) as { spec: Record<string, unknown>; metadata: { annotations?: Record<string, string> } };

describe('connections edit and delete (console)', () => {
  it('PATCH rewrites the manifest through the write path; no password keeps the stored secret, a new one replaces it', async () => {
    const c = await create({ name: 'Orders DB', ...PG, password: 'first-password' });
    const res = await patch(c.connectionId, { name: 'Orders warehouse', schema: 'orders' });
    expect(res.statusCode).toBe(200);
    expect(res.json().connection).toMatchObject({ connectionId: c.connectionId, name: 'Orders warehouse', schema: 'orders', credential: 'secret', host: '127.0.0.1' });
    const file = fileOf(c.path);
    expect(file.spec).toMatchObject({ name: 'Orders warehouse', schema: 'orders', secretRef: c.secretRef, connectionId: c.connectionId });
    expect(file.metadata.annotations?.['bi.controller/requested-by']).toBe(admin.userId);
    expect(t.rt.secrets.reveal(c.secretRef as string)).toBe('first-password');
    // A typed password replaces the secret under the same reference.
    expect((await patch(c.connectionId, { password: 'second-password' })).statusCode).toBe(200);
    // Another database with the password typed again: allowed, the secret follows its new target.
    expect((await patch(c.connectionId, { database: 'orders', password: 'third-password' })).statusCode).toBe(200);
    expect(t.rt.secrets.reveal(c.secretRef as string)).toBe('third-password');
    expect(JSON.stringify((await patch(c.connectionId, {})).json())).not.toContain('third-password');
  });

  it('PATCH refuses to move a stored secret to another host without the password (400 naming password), and a bad field (400 naming it)', async () => {
    const c = await create({ name: 'Orders DB', ...PG, password: 'first-password' });
    const moved = await patch(c.connectionId, { host: '10.9.9.9' });
    expect(moved.statusCode).toBe(400);
    expect(moved.json().error).toMatch(/password/);
    expect(fileOf(c.path).spec.host).toBe('127.0.0.1');
    const port = await patch(c.connectionId, { port: 70000 });
    expect(port.statusCode).toBe(400);
    expect(port.json().error).toMatch(/^Validation failed: port /);
    expect((await patch(c.connectionId, { connectionId: 'D2026A09999' })).json().error).toMatch(/connectionId cannot change/);
  });

  it('DELETE is refused while in use (409 naming the users), then removes the manifest, the connection and its secret', async () => {
    const c = await create({ name: 'Orders DB', ...PG, password: 'first-password' });
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', { name: 'Orders load', source: { connectionId: c.connectionId, type: 'database' }, destination: { connectionId: c.connectionId }, steps: [{ type: 'load', config: { tableName: 't' } }] }));
    await t.sync();
    const refused = await del(c.connectionId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ success: false, error: `Connection ${c.connectionId} is in use by pipeline Orders load`, usedBy: { pipelines: [{ name: 'Orders load' }], clients: [], vdms: [], dashboards: [] } });
    t.remove('pipelines/orders.yaml');
    await t.sync();
    const ok = await del(c.connectionId);
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ success: true, connectionId: c.connectionId, deleted: true });
    expect(t.rt.db.prepare('SELECT 1 FROM connections WHERE connection_id = ?').get(c.connectionId)).toBeUndefined();
    expect(t.rt.secrets.has(c.secretRef as string)).toBe(false);
    expect((await del(c.connectionId)).statusCode).toBe(404);
  });

  it('a connection a Client onboarding defines is changed there (409), an unknown one is 404, members get 403', async () => {
    expect((await patch('D2026A09999', { name: 'x' })).json()).toEqual({ success: false, error: 'Connection D2026A09999 not found' });
    expect((await del('D2026A09999')).statusCode).toBe(404);
    t.rt.db
      .prepare("INSERT INTO connections (connection_id, name, vendor, manifest_key, created_at, updated_at) VALUES ('D2026A00042', 'From onboarding', 'SNOWFLAKE', 'Client/ACME', 'now', 'now')")
      .run();
    const res = await patch('D2026A00042', { name: 'x', accountUrl: 'https://a.snowflakecomputing.com' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toBe('Connection D2026A00042 is defined by Client/ACME: change it there');
    const c = await create({ name: 'Orders DB', ...PG, password: 'first-password' });
    expect((await patch(c.connectionId, { name: 'x' }, member)).statusCode).toBe(403);
    expect((await del(c.connectionId, member)).json()).toEqual({ success: false, error: 'Admin role required' });
  });
});
