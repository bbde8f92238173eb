import { afterEach, describe, expect, it } from 'vitest';
import { loginAs, type TestSession } from '../../helpers/auth.ts';
import type { TestApp } from '../../helpers/runtime.ts';
import { makeAuthApp } from './fixture.ts';

describe('/v1/api-keys/{userId}', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });
  const create = (s: TestSession, payload: unknown, userId = s.userId) =>
    t.app.inject({ method: 'POST', url: `/v1/api-keys/${userId}`, headers: s.headers, payload: payload as object });
  const list = (s: TestSession) => t.app.inject({ method: 'GET', url: `/v1/api-keys/${s.userId}`, headers: s.headers });
  const revoke = (s: TestSession, keyId: string) => t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${s.userId}/${keyId}`, headers: s.headers });
  const probe = (apiKey: string) => t.app.inject({ method: 'GET', url: '/probe/a', headers: { 'x-api-key': apiKey } });

  it('POST 201 {success, keyId, keyPrefix, label, apiKey}: a 73-character key shown once, only its SHA-256 stored', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t, { role: 'admin' });
    const res = await create(s, { label: 'CI deploy' });
    expect(res.statusCode).toBe(201);
    const body = res.json() as { apiKey: string };
    expect(body).toEqual({
      success: true,
      keyId: 'SK2026A00001',
      keyPrefix: body.apiKey.slice(0, 16),
      label: 'CI deploy',
      apiKey: expect.stringMatching(/^bictl_sk_[0-9a-f]{64}$/),
    });
    const row = t.rt.db.prepare('SELECT * FROM api_keys').get() as Record<string, unknown>;
    expect(Object.values(row)).not.toContain(body.apiKey);
    expect(row.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.scope).toBe('sdk:import');
    expect((await probe(body.apiKey)).statusCode).toBe(200);
  });

  it('GET lists the caller’s keys without secrets; clientId is uppercased; expiresAt normalised', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t, { role: 'admin' });
    const other = await loginAs(t, { role: 'member' });
    // An admin's key names a client the registry holds (any state).
    t.rt.db.prepare("INSERT INTO clients (client_id, client_name, status, onboarded_date, last_modified_date) VALUES ('ACME', 'Acme', 'ACTIVE', 'x', 'x')").run();
    const a = (await create(s, { label: 'one', clientId: 'acme', expiresAt: '2026-12-31T00:00:00+01:00' })).json() as { apiKey: string; keyPrefix: string };
    const b = (await create(s, { label: 'two' })).json() as { keyPrefix: string };
    await create(other, { label: 'not mine' });
    await probe(a.apiKey);
    await revoke(s, 'SK2026A00002');
    const res = await list(s);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      keys: [
        {
          keyId: 'SK2026A00001',
          keyPrefix: a.keyPrefix,
          label: 'one',
          clientId: 'ACME',
          expiresAt: '2026-12-30T23:00:00.000Z',
          lastUsedAt: '2026-03-01T10:00:00.000Z',
          revoked: false,
          createdAt: '2026-03-01T10:00:00.000Z',
        },
        {
          keyId: 'SK2026A00002',
          keyPrefix: b.keyPrefix,
          label: 'two',
          clientId: null,
          expiresAt: null,
          lastUsedAt: null,
          revoked: true,
          createdAt: '2026-03-01T10:00:00.000Z',
        },
      ],
    });
    expect(res.body).not.toContain(a.apiKey.slice(16));
  });

  it('400 with field paths: label required, expiresAt ISO 8601 in the future, clientId shape, types', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const cases: [unknown, string][] = [
      [{}, 'label is required'],
      [{ label: '   ' }, 'label is required'],
      [{ label: 7 }, 'label must be a string'],
      [{ label: 'x', expiresAt: 'tomorrow' }, 'expiresAt must be an ISO 8601 date-time'],
      // Date.parse would roll these over (March 2, the next day): refused, not stored.
      [{ label: 'x', expiresAt: '2027-02-30' }, 'expiresAt must be an ISO 8601 date-time'],
      [{ label: 'x', expiresAt: '2027-02-29T00:00:00Z' }, 'expiresAt must be an ISO 8601 date-time'],
      [{ label: 'x', expiresAt: '2027-04-31T10:00:00Z' }, 'expiresAt must be an ISO 8601 date-time'],
      [{ label: 'x', expiresAt: '2027-01-01T24:00:00Z' }, 'expiresAt must be an ISO 8601 date-time'],
      [{ label: 'x', expiresAt: '2026-03-01T09:59:59Z' }, 'expiresAt must be in the future'],
      [{ label: 'x', clientId: 'a b' }, 'clientId must be 1 to 64 letters, digits, "_" or "-"'],
      [{ expiresAt: 5, targetUserId: 1 }, 'label is required; targetUserId must be a string; expiresAt must be a string'],
      [['label'], 'Request body must be a JSON object with a label'],
    ];
    for (const [payload, error] of cases) {
      const res = await create(s, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json()).toEqual({ success: false, error, code: 'validation', problems: expect.any(Array) });
    }
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM api_keys').get()).toEqual({ n: 0 });
  });

  it('targetUserId: admin-only (403), 404 for an unknown user, and the key acts as the target', async () => {
    t = await makeAuthApp();
    const admin = await loginAs(t, { role: 'admin' });
    const member = await loginAs(t, { role: 'member', username: 'mem', clients: ['ACME'] });
    const refused = await create(member, { label: 'x', targetUserId: admin.userId });
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toEqual({ success: false, error: 'Admin role required' });
    expect((await create(member, { label: 'x', targetUserId: member.userId, clientId: 'ACME' })).statusCode).toBe(201);
    const unknown = await create(admin, { label: 'x', targetUserId: 'U2026A09999' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ success: false, error: 'User U2026A09999 not found' });
    const made = await create(admin, { label: 'for mem', targetUserId: member.userId, clientId: 'ACME' });
    expect(made.statusCode).toBe(201);
    const { apiKey, keyId } = made.json() as { apiKey: string; keyId: string };
    expect((await probe(apiKey)).json()).toEqual({ principal: { userId: member.userId, username: 'mem', role: 'member', via: 'apiKey', keyId, clientScope: 'ACME', tenants: ['ACME'] } });
    expect(((await list(member)).json() as { keys: { keyId: string }[] }).keys.map((k) => k.keyId)).toContain(keyId);
  });

  it('DELETE 200 {success, keyId, revoked:true}; 404 for unknown or someone else’s key; admin may revoke any; repeat is idempotent', async () => {
    t = await makeAuthApp();
    const admin = await loginAs(t, { role: 'admin' });
    const m1 = await loginAs(t, { role: 'member', clients: ['ACME'] });
    const m2 = await loginAs(t, { role: 'member' });
    const k1 = (await create(m1, { label: 'a', clientId: 'ACME' })).json() as { keyId: string; apiKey: string };
    const k2 = (await create(m1, { label: 'b', clientId: 'ACME' })).json() as { keyId: string; apiKey: string };
    const notYours = await revoke(m2, k1.keyId);
    expect(notYours.statusCode).toBe(404);
    expect(notYours.json()).toEqual({ success: false, error: `API key ${k1.keyId} not found` });
    expect((await revoke(m1, 'SK2026A09999')).json()).toEqual({ success: false, error: 'API key SK2026A09999 not found' });
    expect((await probe(k1.apiKey)).statusCode).toBe(200);
    expect((await revoke(m1, k1.keyId)).json()).toEqual({ success: true, keyId: k1.keyId, revoked: true });
    expect((await revoke(m1, k1.keyId)).json()).toEqual({ success: true, keyId: k1.keyId, revoked: true });
    expect((await revoke(admin, k2.keyId)).json()).toEqual({ success: true, keyId: k2.keyId, revoked: true });
    expect((await probe(k1.apiKey)).json()).toEqual({ error: 'Invalid API key' });
    expect((await probe(k2.apiKey)).json()).toEqual({ error: 'Invalid API key' });
  });

  it('revoking keeps the key’s last use (not yet flushed) in the listing', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t, { role: 'admin' });
    const k = (await create(s, { label: 'a' })).json() as { keyId: string; apiKey: string };
    expect((await probe(k.apiKey)).statusCode).toBe(200);
    await revoke(s, k.keyId);
    const [key] = ((await list(s)).json() as { keys: { lastUsedAt: string | null; revoked: boolean }[] }).keys;
    expect(key).toMatchObject({ revoked: true, lastUsedAt: expect.stringMatching(/^\d{4}-/) });
  });

  it('every key route is S with CTN: 401 without a session, 403 without CTN, 403 on another user’s path', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const other = await loginAs(t);
    const routes = [
      { method: 'POST' as const, url: `/v1/api-keys/${s.userId}`, payload: { label: 'x' } },
      { method: 'GET' as const, url: `/v1/api-keys/${s.userId}` },
      { method: 'DELETE' as const, url: `/v1/api-keys/${s.userId}/SK2026A00001` },
    ];
    for (const r of routes) {
      expect((await t.app.inject({ ...r })).json()).toEqual({ success: false, error: 'Session required' });
      expect((await t.app.inject({ ...r, headers: { cookie: s.cookie } })).json()).toEqual({ success: false, error: 'Invalid CSRF token' });
      expect((await t.app.inject({ ...r, headers: other.headers })).json()).toEqual({ success: false, error: 'Forbidden' });
    }
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM api_keys').get()).toEqual({ n: 0 });
  });
});
