import { afterEach, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { generateApiKey } from '../../../controller/auth/api-key-text.ts';
import { createUserWithKey, loginAs } from '../../helpers/auth.ts';
import type { TestApp } from '../../helpers/runtime.ts';
import { makeAuthApp } from './fixture.ts';

describe('requireApiKey (A endpoints)', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  const probe = (headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url: '/probe/a', headers });

  it('accepts Authorization: Bearer and x-api-key and sets the principal', async () => {
    t = await makeAuthApp();
    const k = await createUserWithKey(t, { role: 'member', username: 'svc' });
    for (const headers of [{ authorization: `Bearer ${k.apiKey}` }, { 'x-api-key': k.apiKey }] as Record<string, string>[]) {
      const res = await probe(headers);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ principal: { userId: k.userId, username: 'svc', role: 'member', via: 'apiKey', keyId: k.keyId } });
    }
  });

  it('carries the key tenant scope as clientScope', async () => {
    t = await makeAuthApp();
    const k = await createUserWithKey(t, { clientId: 'acme' });
    expect((await probe(k.headers)).json()).toEqual({
      principal: { userId: k.userId, username: k.username, role: 'admin', via: 'apiKey', keyId: k.keyId, clientScope: 'ACME' },
    });
  });

  it('401 API key required without a key (or an empty / non-Bearer Authorization)', async () => {
    t = await makeAuthApp();
    for (const headers of [{}, { authorization: 'Basic abc' }, { 'x-api-key': '' }, { authorization: 'Bearer ' }] as Record<string, string>[]) {
      const res = await probe(headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'API key required' });
    }
  });

  it('401 Invalid API key for malformed, bad-checksum and unknown keys; the checksum is checked before any store lookup', async () => {
    t = await makeAuthApp();
    const k = await createUserWithKey(t);
    const byHash = vi.spyOn(t.rt.auth.keys, 'byHash');
    const last = k.apiKey.at(-1) === '0' ? '1' : '0';
    for (const bad of ['nope', k.apiKey.slice(0, 72), `${k.apiKey.slice(0, 72)}${last}`, k.apiKey.toUpperCase()]) {
      const res = await probe({ authorization: `Bearer ${bad}` });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ error: 'Invalid API key' });
    }
    expect(byHash).not.toHaveBeenCalled();
    // A well-formed key (valid checksum) that was never issued is looked up and refused.
    const res = await probe({ 'x-api-key': generateApiKey() });
    expect(res.json()).toEqual({ error: 'Invalid API key' });
    expect(byHash).toHaveBeenCalledTimes(1);
  });

  it('401 API key expired once the injected clock reaches expiresAt', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const created = await t.app.inject({
      method: 'POST',
      url: `/v1/api-keys/${s.userId}`,
      headers: s.headers,
      payload: { label: 'short', expiresAt: new Date(t.clock.now().getTime() + 3_600_000).toISOString() },
    });
    const { apiKey } = created.json() as { apiKey: string };
    expect((await probe({ 'x-api-key': apiKey })).statusCode).toBe(200);
    t.clock.advance(3_599_999);
    expect((await probe({ 'x-api-key': apiKey })).statusCode).toBe(200);
    t.clock.advance(1);
    const res = await probe({ 'x-api-key': apiKey });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'API key expired' });
  });

  it('a revoked key fails at the very next request (cache entry dropped), though it was cached', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const { apiKey, keyId } = (
      await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, headers: s.headers, payload: { label: 'ci' } })
    ).json() as { apiKey: string; keyId: string };
    const byHash = vi.spyOn(t.rt.auth.keys, 'byHash');
    expect((await probe({ authorization: `Bearer ${apiKey}` })).statusCode).toBe(200);
    expect((await probe({ authorization: `Bearer ${apiKey}` })).statusCode).toBe(200);
    expect(byHash).toHaveBeenCalledTimes(1); // the second request came from the cache
    const del = await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${s.userId}/${keyId}`, headers: s.headers });
    expect(del.json()).toEqual({ success: true, keyId, revoked: true });
    const res = await probe({ authorization: `Bearer ${apiKey}` });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ error: 'Invalid API key' });
  });

  it('a cached entry is re-read after its TTL, so a revoke by another process takes effect', async () => {
    t = await makeAuthApp({ settings: { keyCacheTtlMs: 30_000 } });
    const k = await createUserWithKey(t);
    expect((await probe(k.headers)).statusCode).toBe(200);
    t.rt.db.prepare('UPDATE api_keys SET revoked_at = ? WHERE key_id = ?').run(t.clock.now().toISOString(), k.keyId);
    expect((await probe(k.headers)).statusCode).toBe(200);
    t.clock.advance(30_001);
    expect((await probe(k.headers)).json()).toEqual({ error: 'Invalid API key' });
  });

  it('429 with Retry-After past the per-key limit, per key, recovering with time', async () => {
    t = await makeAuthApp({ settings: { keyRateLimit: 2 } });
    const a = await createUserWithKey(t);
    const b = await createUserWithKey(t);
    expect((await probe(a.headers)).statusCode).toBe(200);
    expect((await probe(a.headers)).statusCode).toBe(200);
    const res = await probe(a.headers);
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ error: 'Rate limit exceeded' });
    expect((await probe(b.headers)).statusCode).toBe(200);
    t.clock.advance(500);
    expect((await probe(a.headers)).statusCode).toBe(200);
  });

  it('the default limit lets 1000 requests in one second through', async () => {
    t = await makeAuthApp();
    const k = await createUserWithKey(t);
    const auth = t.rt.auth;
    for (let i = 0; i < 1000; i++) expect(auth.authenticateKey(k.apiKey).ok).toBe(true);
  });

  it('lastUsedAt: visible at once, written in one batch later, flushed at shutdown and kept over a restart', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const { apiKey, keyId } = (
      await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, headers: s.headers, payload: { label: 'ci' } })
    ).json() as { apiKey: string; keyId: string };
    const stored = () => (t.rt.db.prepare('SELECT last_used_at FROM api_keys WHERE key_id = ?').get(keyId) as { last_used_at: string | null }).last_used_at;
    const touch = vi.spyOn(t.rt.auth.keys, 'touchMany');
    for (let i = 0; i < 20; i++) await probe({ 'x-api-key': apiKey });
    expect(stored()).toBeNull();
    const listed = await t.app.inject({ method: 'GET', url: `/v1/api-keys/${s.userId}`, headers: s.headers });
    expect((listed.json() as { keys: { lastUsedAt: string }[] }).keys[0].lastUsedAt).toBe('2026-03-01T10:00:00.000Z');
    t.clock.advance(5000);
    await probe({ 'x-api-key': apiKey });
    t.rt.auth.flushLastUsed();
    expect(touch).toHaveBeenCalledTimes(1);
    expect(stored()).toBe('2026-03-01T10:00:05.000Z');
    t.clock.advance(5000);
    await probe({ 'x-api-key': apiKey });
    await t.app.close();
    const t2 = await t.restart(); // runtime shutdown flushes
    const row = t2.rt.db.prepare('SELECT last_used_at FROM api_keys WHERE key_id = ?').get(keyId) as { last_used_at: string };
    expect(row.last_used_at).toBe('2026-03-01T10:00:10.000Z');
    t = { ...t2, app: await buildApp({ runtime: t2.rt }), close: () => t2.close() };
  });
});
