import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loadConfig } from '../../../controller/config.ts';
import { SecretStore, SECRETS_DISABLED_MESSAGE } from '../../../controller/secrets/store.ts';
import { loginAs } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';

const SECRET_KEY = 'c'.repeat(64);

async function appWith(opts: { secretKey?: string } = {}): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), 'bi-settings-'));
  const config = loadConfig({}, { manifestsDir: join(dir, 'manifests'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data'), secretKey: opts.secretKey });
  return makeTestApp({ dir, config });
}

async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

const CORE = manifest('CoreModel', 'retail-core', {
  modelId: 'SM2026A00001',
  name: 'Retail core model',
  description: 'shared',
  definition: { columns: ['region', { name: 'revenue' }, 'region', 7] },
});

describe('settings endpoints', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('tells the UI who is signed in and whether settings are shown', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const admin = await loginAs(t, { role: 'admin', username: 'ada' });
    const res = await t.app.inject({ url: `/v1/settings/session/${admin.userId}`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true, userId: admin.userId, username: 'ada', role: 'admin', settings: true, secrets: { available: true } });

    const member = await loginAs(t, { role: 'member', username: 'mo', clients: ['NEWCO', 'ACME'] });
    const m = await t.app.inject({ url: `/v1/settings/session/${member.userId}`, headers: member.headers });
    // A member learns their granted clients (the key form offers exactly these), onboarded or not.
    expect(m.json()).toEqual({ success: true, userId: member.userId, username: 'mo', role: 'member', settings: false, clients: ['ACME', 'NEWCO'] });
  });

  it('reports a missing BI_SECRET_KEY to admins', async () => {
    t = await appWith();
    const admin = await loginAs(t);
    const res = await t.app.inject({ url: `/v1/settings/session/${admin.userId}`, headers: admin.headers });
    expect(res.json().secrets).toEqual({ available: false, problem: SECRETS_DISABLED_MESSAGE });
  });

  it('keeps members, missing CSRF and missing sessions out of every admin endpoint', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const member = await loginAs(t, { role: 'member' });
    const admin = await loginAs(t, { role: 'admin' });
    const endpoints = [
      { method: 'GET' as const, url: (u: string) => `/v1/bi/admin/core-models/${u}` },
      { method: 'POST' as const, url: (u: string) => `/v1/bi/admin/test-connection/${u}`, payload: { vendor: 'POSTGRESQL', host: '127.0.0.1' } },
      { method: 'POST' as const, url: (u: string) => `/v1/bi/admin/connections/${u}`, payload: { name: 'x', vendor: 'POSTGRESQL', host: 'h' } },
      { method: 'GET' as const, url: (u: string) => `/v1/bi/admin/clients/ACME/audit/${u}` },
    ];
    for (const e of endpoints) {
      const asMember = await t.app.inject({ method: e.method, url: e.url(member.userId), headers: member.headers, payload: e.payload });
      expect(asMember.statusCode, e.url('')).toBe(403);
      const noCsrf = await t.app.inject({ method: e.method, url: e.url(admin.userId), headers: { cookie: admin.cookie }, payload: e.payload });
      expect(noCsrf.statusCode).toBe(403);
      expect(noCsrf.json()).toEqual({ success: false, error: 'Invalid CSRF token' });
      const anon = await t.app.inject({ method: e.method, url: e.url(admin.userId), payload: e.payload });
      expect(anon.statusCode).toBe(401);
      expect(anon.json()).toEqual({ success: false, error: 'Session required' });
    }
    expect(existsSync(join(t.manifests, 'connections'))).toBe(false);
  });

  it('lists the core models in the store with their columns', async () => {
    t = await appWith();
    t.write('core/retail.yaml', CORE);
    await t.sync();
    const admin = await loginAs(t);
    const res = await t.app.inject({ url: `/v1/bi/admin/core-models/${admin.userId}`, headers: admin.headers });
    expect(res.json()).toEqual({
      success: true,
      coreModels: [{ modelId: 'SM2026A00001', name: 'Retail core model', description: 'shared', columns: ['region', 'revenue'], columnTypes: {} }],
    });
  });

  it('Test Connection answers a refused server with connected:false and a message', async () => {
    t = await appWith();
    const admin = await loginAs(t);
    const port = await closedPort();
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/test-connection/${admin.userId}`,
      headers: admin.headers,
      payload: { vendor: 'POSTGRESQL', host: '127.0.0.1', port, database: 'test', schema: 'public', username: 'u', password: 'pw' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      connected: false,
      vendor: 'POSTGRESQL',
      message: `Connection refused by 127.0.0.1:${port}/test: is the server running and listening there?`,
      durationMs: expect.any(Number),
    });
  });

  it('Test Connection refuses a malformed body with every problem and its field', async () => {
    t = await appWith();
    const admin = await loginAs(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/test-connection/${admin.userId}`,
      headers: admin.headers,
      payload: { vendor: 'ORACLE', port: 70000, username: 5 },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      error: 'Validation failed: vendor must be one of SNOWFLAKE, POSTGRESQL; username must be a string; port must be an integer from 1 to 65535',
      code: 'validation',
      problems: expect.any(Array),
    });
  });

  it('refuses to store a typed password when BI_SECRET_KEY is unset, and writes nothing', async () => {
    t = await appWith();
    const admin = await loginAs(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/connections/${admin.userId}`,
      headers: admin.headers,
      payload: { name: 'ACME warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', database: 'test', schema: 'public', username: 'postgres', password: 'pw' },
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toEqual({ success: false, error: SECRETS_DISABLED_MESSAGE });
    expect(existsSync(join(t.manifests, 'connections'))).toBe(false);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM connections').get()).toEqual({ n: 0 });
  });

  it('writes a Connection manifest with a secret reference, never the password, and updates it in place', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const admin = await loginAs(t);
    const body = { name: 'ACME warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432, database: 'test', schema: 'public', username: 'postgres', password: 'S3cret-typed' };
    const res = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${admin.userId}`, headers: admin.headers, payload: body });
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toEqual({ success: true, connectionId: expect.stringMatching(/^D\d{4}A00001$/), secretRef: expect.stringMatching(/^secret:[A-Za-z0-9_-]+$/), path: expect.any(String), phase: 'Synced' });
    const id = created.connectionId as string;
    expect(created.path).toBe(`connections/${id}.yaml`);

    const text = readFileSync(join(t.manifests, created.path), 'utf8');
    expect(text).not.toContain('S3cret-typed');
    expect(parse(text)).toEqual({
      apiVersion: 'bi.controller/v1',
      kind: 'Connection',
      metadata: { name: id, labels: { 'bi.controller/created-by': 'settings-ui' }, annotations: { 'bi.controller/requested-by': admin.userId } },
      spec: { name: 'ACME warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432, database: 'test', schema: 'public', username: 'postgres', connectionId: id, secretRef: created.secretRef },
    });
    const row = t.rt.db.prepare('SELECT connection_id, vendor, account_url, secret_ref, manifest_key FROM connections').all();
    expect(row).toEqual([{ connection_id: id, vendor: 'POSTGRESQL', account_url: 'postgresql://127.0.0.1:5432', secret_ref: created.secretRef, manifest_key: `Connection/${id}` }]);
    const secrets = new SecretStore({ db: t.rt.db, secretKey: SECRET_KEY });
    expect(secrets.reveal(created.secretRef)).toBe('S3cret-typed');
    const dump = JSON.stringify(t.rt.db.prepare('SELECT * FROM secrets').all());
    expect(dump).not.toContain('S3cret-typed');

    // The wizard retried: same connection, stored secret kept, no second connection.
    const again = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/connections/${admin.userId}`,
      headers: admin.headers,
      payload: { ...body, password: undefined, connectionId: id, secretRef: created.secretRef, schema: 'sales' },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ success: true, connectionId: id, secretRef: created.secretRef, path: created.path, phase: 'Synced' });
    expect(t.rt.db.prepare('SELECT connection_id, schema_name FROM connections').all()).toEqual([{ connection_id: id, schema_name: 'sales' }]);
    expect(secrets.reveal(created.secretRef)).toBe('S3cret-typed');
  });

  it('Test Connection never sends a stored password to another target: 400, and the other host sees no connection', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const admin = await loginAs(t);
    const target = { vendor: 'POSTGRESQL', host: '127.0.0.1', port: await closedPort(), database: 'test', schema: 'public', username: 'postgres' };
    const saved = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${admin.userId}`, headers: admin.headers, payload: { name: 'ACME', ...target, password: 'S3cret-typed' } });
    expect(saved.statusCode).toBe(201);
    const secretRef = saved.json().secretRef as string;
    // The attacker's endpoint: a real listener that records whatever reaches it.
    const received: Buffer[] = [];
    let connections = 0;
    const attacker = createServer((sock) => {
      connections += 1;
      sock.on('data', (d: Buffer) => received.push(d));
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.2', r));
    const attackerPort = (attacker.address() as { port: number }).port;
    try {
      const others: [Record<string, unknown>, string][] = [
        [{ host: '127.0.0.2', port: attackerPort }, 'host, port differ'],
        [{ port: attackerPort }, 'port differs'],
        [{ database: 'other' }, 'database differs'],
        [{ username: 'mallory' }, 'username differs'],
        [{ host: undefined, accountUrl: `postgresql://127.0.0.2:${attackerPort}` }, 'host, port differ'],
      ];
      for (const [change, differ] of others) {
        const res = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/test-connection/${admin.userId}`, headers: admin.headers, payload: { ...target, ...change, secretRef } });
        expect(res.statusCode, JSON.stringify(change)).toBe(400);
        const error = `secretRef ${secretRef} was stored for another target (${differ}); type the password to use it here`;
        expect(res.json()).toEqual({ success: false, error, code: 'validation', problems: expect.any(Array) });
      }
      // The same target (host given as an account URL) is allowed: it reaches the stored endpoint.
      const same = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/test-connection/${admin.userId}`, headers: admin.headers, payload: { ...target, host: undefined, accountUrl: `postgresql://127.0.0.1:${target.port}`, secretRef } });
      expect(same.statusCode).toBe(200);
      expect(same.json()).toMatchObject({ success: true, connected: false });
      // Saving the connection with the reference pointed elsewhere is refused the same way.
      const moved = await t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${admin.userId}`, headers: admin.headers, payload: { name: 'ACME', ...target, host: '127.0.0.2', connectionId: saved.json().connectionId, secretRef } });
      expect(moved.statusCode).toBe(400);
      expect(moved.json().error).toContain('was stored for another target (host differs)');
    } finally {
      await new Promise<void>((r) => attacker.close(() => r()));
    }
    expect(connections).toBe(0);
    expect(Buffer.concat(received).toString('latin1')).not.toContain('S3cret');
  });

  it('refuses plain fields it does not know into the manifest and checks references', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const admin = await loginAs(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/connections/${admin.userId}`,
      headers: admin.headers,
      payload: { vendor: 'SNOWFLAKE', secretRef: 'secret:nope', token: 'x', privateKey: 'y' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, error: 'Validation failed: name is required; accountUrl is required for SNOWFLAKE', code: 'validation', problems: expect.any(Array) });
    const ref = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/connections/${admin.userId}`,
      headers: admin.headers,
      payload: { name: 'n', vendor: 'SNOWFLAKE', accountUrl: 'https://a.snowflakecomputing.com', secretRef: 'secret:nope', token: 'x' },
    });
    expect(ref.statusCode).toBe(400);
    expect(ref.json()).toEqual({ success: false, error: 'Validation failed: secretRef secret:nope does not exist', code: 'validation', problems: expect.any(Array) });
  });

  it('withdraws the manifest and the secret when the connection cannot be applied', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    t.write('connections/acme-warehouse.yaml', manifest('Connection', 'acme-warehouse', { connectionId: 'D2026A00001', name: 'ACME', vendor: 'SNOWFLAKE' }));
    await t.sync();
    const admin = await loginAs(t);
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/connections/${admin.userId}`,
      headers: admin.headers,
      payload: { connectionId: 'D2026A00001', name: 'Other', vendor: 'POSTGRESQL', host: 'h', password: 'pw-x' },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ success: false, error: 'connection: connection D2026A00001 is already defined by Connection/acme-warehouse' });
    expect(existsSync(join(t.manifests, 'connections/D2026A00001.yaml'))).toBe(false);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM secrets').get()).toEqual({ n: 0 });
    expect(t.rt.db.prepare('SELECT connection_id, name, manifest_key FROM connections').all()).toEqual([
      { connection_id: 'D2026A00001', name: 'ACME', manifest_key: 'Connection/acme-warehouse' },
    ]);
  });

  it('reuses the connection written for a client that is not ACTIVE (a retried Create whose answer was lost), and issues a new one once the client uses it', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const admin = await loginAs(t);
    const body = { name: 'Zeta warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432, database: 'test', schema: 'public', username: 'postgres', password: 'pw-1', owner: 'zeta' };
    const post = (payload: object) => t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${admin.userId}`, headers: admin.headers, payload });
    const first = await post(body);
    expect(first.statusCode).toBe(201);
    const id = first.json().connectionId as string;
    expect(parse(readFileSync(join(t.manifests, `connections/${id}.yaml`), 'utf8')).spec.owner).toBe('ZETA');
    // The same Create again without the ID (its answer never arrived): the same connection, updated.
    const retry = await post({ ...body, password: 'pw-2' });
    expect(retry.statusCode).toBe(200);
    expect(retry.json().connectionId).toBe(id);
    expect(t.rt.db.prepare('SELECT connection_id FROM connections').all()).toEqual([{ connection_id: id }]);
    // Another client never gets it.
    const other = await post({ ...body, owner: 'OMEGA' });
    expect(other.statusCode).toBe(201);
    expect(other.json().connectionId).not.toBe(id);
    // Once ZETA is ACTIVE on it, a new Create for ZETA gets a new connection.
    t.rt.db.prepare(`INSERT INTO clients (client_id, client_name, connection_id, status, onboarded_by, onboarded_date, last_modified_date) VALUES ('ZETA', 'Zeta', ?, 'ACTIVE', 'u', 'x', 'x')`).run(id);
    const after = await post(body);
    expect(after.statusCode).toBe(201);
    expect(after.json().connectionId).not.toBe(id);
  });

  it('leaves one connection for a burst of Creates for one client (a double click, a retry racing the lost answer)', async () => {
    t = await appWith({ secretKey: SECRET_KEY });
    const admin = await loginAs(t);
    const body = { name: 'Zeta warehouse', vendor: 'POSTGRESQL', host: '127.0.0.1', port: 5432, database: 'test', schema: 'public', username: 'postgres', password: 'pw-1' };
    const post = (owner: string) => t.app.inject({ method: 'POST', url: `/v1/bi/admin/connections/${admin.userId}`, headers: admin.headers, payload: { ...body, owner } });
    const answers = await Promise.all(['zeta', 'ZETA', 'zeta', 'Zeta', 'zeta', 'ZETA', 'zeta', 'zeta'].map(post));
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    expect(new Set(answers.map((a) => a.json().connectionId)).size).toBe(1);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM connections').get()).toEqual({ n: 1 });
  });

  it('shows a failed onboarding in the audit with the step, the reason and the manifest status', async () => {
    t = await appWith();
    t.write('clients/BETA.yaml', manifest('Client', 'BETA', { clientId: 'BETA', clientName: 'Beta', connectionId: 'D2026A00005', coreModelId: 'SM2026A00077', vdm: [{ name: 'v', selectedColumns: ['a'] }] }));
    await t.sync();
    const admin = await loginAs(t);
    const res = await t.app.inject({ url: `/v1/bi/admin/clients/beta/audit/${admin.userId}`, headers: admin.headers });
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.audit).toMatchObject({ status: 'FAILED', clientName: 'Beta', isActive: false, failedStep: expect.any(String), failureReason: expect.stringContaining('SM2026A00077') });
    expect(body.manifest).toMatchObject({ key: 'Client/BETA', path: 'clients/BETA.yaml', phase: 'Failed', attempts: 1, message: expect.stringContaining('SM2026A00077') });

    const missing = await t.app.inject({ url: `/v1/bi/admin/clients/NOPE/audit/${admin.userId}`, headers: admin.headers });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ success: false, error: 'Client NOPE not found' });
  });
});

describe('UI pages', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('serves the app shell with a same-origin-only policy and its scripts', async () => {
    t = await appWith();
    const root = await t.app.inject({ url: '/' });
    expect(root.statusCode).toBe(302);
    expect(root.headers.location).toBe('/ui/');
    const page = await t.app.inject({ url: '/ui/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("default-src 'self'");
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).toContain('<script type="module" src="/ui/js/app.js"></script>');
    expect(page.body).not.toMatch(/https?:\/\//);
    const js = await t.app.inject({ url: '/ui/js/pages/wizard.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const css = await t.app.inject({ url: '/ui/styles.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('serves nothing outside the UI folder', async () => {
    t = await appWith();
    // The console's type-check files (api/ui/tsconfig.json, js/types.d.ts) are not served either.
    for (const url of ['/ui/../package.json', '/ui/%2e%2e/package.json', '/ui/js/../../routes/ui.ts', '/ui/nope.js', '/ui/tsconfig.json', '/ui/js/types.d.ts']) {
      const res = await t.app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().success).toBe(false);
    }
  });

  it('loads no script, style or font from another origin', async () => {
    t = await appWith();
    const { loadAssets } = await import('../../../api/routes/ui.ts');
    for (const [path, asset] of loadAssets()) {
      const text = asset.body.toString('utf8');
      expect(text, path).not.toMatch(/(?:src|href)\s*=\s*["']https?:/);
      expect(text, path).not.toMatch(/@import\s+url\(\s*["']?https?:/);
      expect(text, path).not.toMatch(/fetch\(\s*["']https?:/);
    }
  });
});
