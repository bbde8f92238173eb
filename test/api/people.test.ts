import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../controller/audit/canonical.ts';
import { sha256 } from '../../controller/hash.ts';
import { createTestUser, loginAs, type TestSession } from '../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../helpers/runtime.ts';

/**
 * People administration (docs/access.md): every user's keys, password reset, deleting a user, the
 * last login, the user's version (a stale edit answers 409), and an admin's key only for a client
 * the registry holds.
 */
describe('people administration (admin sessions)', () => {
  let t: TestApp;
  let admin: TestSession;
  beforeEach(async () => {
    t = await makeTestApp();
    admin = await loginAs(t, { role: 'admin', username: 'root' });
  });
  afterEach(async () => t.close());

  const inject = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, s = admin, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url, headers: { ...s.headers, ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
  const users = async (s = admin) => (await inject('GET', `/v1/bi/admin/users/${s.userId}`, undefined, s)).json().users as { userId: string; username: string; version: number; lastLoginAt: string | null }[];
  const audit = async () =>
    (await inject('GET', `/v1/bi/admin/audit/${admin.userId}?order=asc&limit=1000`)).json().entries as { action: string; actor: { id: string }; object?: { id: string }; before?: string }[];
  const addClient = (clientId: string) =>
    t.rt.db.prepare("INSERT INTO clients (client_id, client_name, status, onboarded_date, last_modified_date) VALUES (?, ?, 'ACTIVE', 'x', 'x')").run(clientId, `${clientId} Inc.`);

  it('GET /v1/bi/admin/api-keys lists every user\'s keys with their user; the admin revokes another user\'s key; members are refused', async () => {
    addClient('ACME');
    const mia = await loginAs(t, { username: 'mia', role: 'member', clients: ['ACME'] });
    const own = (await inject('POST', `/v1/api-keys/${admin.userId}`, { label: 'ci' })).json() as { keyId: string };
    const hers = (await inject('POST', `/v1/api-keys/${mia.userId}`, { label: 'partner', clientId: 'ACME' }, mia)).json() as { keyId: string; apiKey: string };
    const all = await inject('GET', `/v1/bi/admin/api-keys/${admin.userId}`);
    expect(all.statusCode).toBe(200);
    const keys = all.json().keys as Record<string, unknown>[];
    expect(keys.map((k) => [k.keyId, k.userId, k.username, k.clientId])).toEqual([
      [own.keyId, admin.userId, 'root', null],
      [hers.keyId, mia.userId, 'mia', 'ACME'],
    ]);
    expect(Object.keys(keys[1]).sort()).toEqual(['clientId', 'createdAt', 'expiresAt', 'keyId', 'keyPrefix', 'label', 'lastUsedAt', 'revoked', 'userId', 'username']);
    // The caller's own listing is unchanged: no owner fields, only their keys.
    const mine = (await inject('GET', `/v1/api-keys/${admin.userId}`)).json().keys as Record<string, unknown>[];
    expect(mine.map((k) => k.keyId)).toEqual([own.keyId]);
    expect(mine[0]).not.toHaveProperty('userId');
    const member = await inject('GET', `/v1/bi/admin/api-keys/${mia.userId}`, undefined, mia);
    expect([member.statusCode, member.json()]).toEqual([403, { success: false, error: 'Admin role required' }]);
    expect((await inject('DELETE', `/v1/api-keys/${admin.userId}/${hers.keyId}`)).json()).toEqual({ success: true, keyId: hers.keyId, revoked: true });
    const probe = await t.app.inject({ method: 'GET', url: `/v1/bi/admin/clients/ACME/${mia.userId}`, headers: { authorization: `Bearer ${hers.apiKey}` } });
    expect(probe.statusCode).toBe(401);
  });

  it('an admin\'s key for a client the registry does not hold is refused (400 naming clientId); a member\'s granted one is not', async () => {
    const refused = await inject('POST', `/v1/api-keys/${admin.userId}`, { label: 'typo', clientId: 'ACMEE' });
    expect([refused.statusCode, refused.json()]).toEqual([400, { success: false, error: 'clientId must name a client in the registry (Client ACMEE not found)', code: 'validation', problems: [{ path: 'clientId', message: 'must name a client in the registry (Client ACMEE not found)' }] }]);
    const mia = await createTestUser(t, { username: 'mia', role: 'member', clients: ['NEWCO'] });
    // For a member the key names a granted client, onboarded or not (the member onboards it with the key).
    const forMember = await inject('POST', `/v1/api-keys/${admin.userId}`, { label: 'p', targetUserId: mia.userId, clientId: 'NEWCO' });
    expect(forMember.statusCode).toBe(201);
    addClient('ACMEE');
    expect((await inject('POST', `/v1/api-keys/${admin.userId}`, { label: 'now', clientId: 'acmee' })).statusCode).toBe(201);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM api_keys').get()).toEqual({ n: 2 });
  });

  it('a password reset sets the new password, ends the user\'s sessions and is audited without the password', async () => {
    const mia = await loginAs(t, { username: 'mia', role: 'member' });
    const short = await inject('POST', `/v1/bi/admin/users/${mia.userId}/password/${admin.userId}`, { password: 'short' });
    expect([short.statusCode, short.json()]).toEqual([400, { success: false, error: 'password must be at least 8 characters', code: 'validation', problems: [{ path: 'password', message: 'must be at least 8 characters' }] }]);
    const missing = await inject('POST', `/v1/bi/admin/users/${mia.userId}/password/${admin.userId}`, {});
    expect([missing.statusCode, missing.json()]).toEqual([400, { success: false, error: 'password is required', code: 'validation', problems: [{ path: 'password', message: 'is required' }] }]);
    const unknown = await inject('POST', `/v1/bi/admin/users/U2026A09999/password/${admin.userId}`, { password: 'a-new-password' });
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { success: false, error: 'User U2026A09999 not found' }]);
    const res = await inject('POST', `/v1/bi/admin/users/${mia.userId}/password/${admin.userId}`, { password: 'a-new-password' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json().user).toMatchObject({ userId: mia.userId, username: 'mia' });
    // Her browser session is gone; the old password fails, the new one works.
    const after = await inject('GET', `/v1/api-keys/${mia.userId}`, undefined, mia);
    expect(after.statusCode).toBe(401);
    const login = (password: string) => t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'mia', password } });
    expect((await login('a-new-password')).statusCode).toBe(200);
    const entry = (await audit()).find((e) => e.action === 'user.password');
    expect(entry).toMatchObject({ actor: { id: admin.userId }, object: { id: mia.userId } });
    expect(JSON.stringify(await audit())).not.toContain('a-new-password');
  });

  it('deleting a user revokes their keys, ends their sessions, is audited; never yourself (409); 404 for an unknown user', async () => {
    addClient('ACME');
    const mia = await loginAs(t, { username: 'mia', role: 'member', clients: ['ACME'] });
    const key = (await inject('POST', `/v1/api-keys/${mia.userId}`, { label: 'partner', clientId: 'ACME' }, mia)).json() as { keyId: string; apiKey: string };
    const self = await inject('DELETE', `/v1/bi/admin/users/${admin.userId}/${admin.userId}`);
    expect([self.statusCode, self.json()]).toEqual([409, { success: false, error: 'You cannot delete your own account; another admin can' }]);
    const unknown = await inject('DELETE', `/v1/bi/admin/users/U2026A09999/${admin.userId}`);
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { success: false, error: 'User U2026A09999 not found' }]);
    const res = await inject('DELETE', `/v1/bi/admin/users/${mia.userId}/${admin.userId}`);
    expect([res.statusCode, res.json()]).toEqual([200, { success: true, userId: mia.userId, deleted: true }]);
    expect((await users()).map((u) => u.username)).toEqual(['root']);
    // Her key and her session stop at once (the key was in the lookup cache a moment ago).
    expect((await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers: { authorization: `Bearer ${key.apiKey}` }, payload: {} })).json()).toEqual({ error: 'Invalid API key' });
    expect((await inject('GET', `/v1/api-keys/${mia.userId}`, undefined, mia)).statusCode).toBe(401);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?').get(mia.userId)).toEqual({ n: 0 });
    const entries = await audit();
    expect(entries.find((e) => e.action === 'key.revoke' && e.object?.id === key.keyId)?.actor.id).toBe(admin.userId);
    expect(entries.find((e) => e.action === 'user.delete')).toMatchObject({ actor: { id: admin.userId }, object: { id: mia.userId }, before: sha256(canonicalJson({ disabled: false, role: 'member' })) });
    expect((await inject('DELETE', `/v1/bi/admin/users/${mia.userId}/${admin.userId}`)).statusCode).toBe(404);
  });

  it('the store keeps the last enabled admin (bictl may try): the delete is refused and revokes nothing', async () => {
    const key = t.rt.auth.createKey({ userId: admin.userId, label: 'k', createdBy: admin.userId });
    expect(() => t.rt.auth.deleteUser(admin.userId)).toThrow('The last admin cannot be deleted');
    expect(t.rt.auth.keys.get(key.keyId)?.revoked).toBe(false);
  });

  it('the last login is stored at login and shown in the users list', async () => {
    await createTestUser(t, { username: 'mia', role: 'member', password: 'mia-password-1' });
    expect((await users()).find((u) => u.username === 'mia')?.lastLoginAt).toBeNull();
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'mia', password: 'mia-password-1' } })).statusCode).toBe(200);
    expect((await users()).find((u) => u.username === 'mia')?.lastLoginAt).toBe(t.rt.clock().toISOString());
    // A failed login changes nothing.
    const before = (await users()).find((u) => u.username === 'root')?.lastLoginAt;
    expect((await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'root', password: 'wrong-password' } })).statusCode).toBe(401);
    expect((await users()).find((u) => u.username === 'root')?.lastLoginAt).toBe(before);
  });

  it('two admins editing one user: the stale write (version or If-Match) is refused with 409 and loses nothing', async () => {
    addClient('ACME');
    addClient('GLOBEX');
    const mia = await createTestUser(t, { username: 'mia', role: 'member', clients: ['ACME'] });
    const ada = await loginAs(t, { username: 'ada', role: 'admin' });
    const read = (await users()).find((u) => u.userId === mia.userId) as { version: number };
    const patch = (body: unknown, s: TestSession, headers: Record<string, string> = {}) => inject('PATCH', `/v1/bi/admin/users/${mia.userId}/${s.userId}`, body, s, headers);
    // Ada adds GLOBEX first, based on what she read.
    const first = await patch({ clients: ['ACME', 'GLOBEX'], version: read.version }, ada);
    expect(first.statusCode).toBe(200);
    expect(first.json().user.version).toBeGreaterThan(read.version);
    expect(first.headers.etag).toBe(`"${first.json().user.version}"`);
    // Root, from the same read, would drop GLOBEX: refused.
    const stale = await patch({ clients: ['ACME'], version: read.version }, admin);
    expect(stale.statusCode).toBe(409);
    expect(stale.json()).toEqual({
      success: false,
      error: `User ${mia.userId} was changed by someone else since you read it (version ${first.json().user.version}, yours ${read.version}): reload and try again`,
    });
    const byHeader = await patch({ clients: ['ACME'] }, admin, { 'if-match': `"${read.version}"` });
    expect(byHeader.statusCode).toBe(409);
    expect(t.rt.auth.users.clientsOf(mia.userId)).toEqual(['ACME', 'GLOBEX']);
    // With the current version it goes through; without any, too (last write wins, as before).
    expect((await patch({ disabled: true }, admin, { 'if-match': `W/"${first.json().user.version}"` })).statusCode).toBe(200);
    expect((await patch({ disabled: false }, admin)).statusCode).toBe(200);
    const bad = await patch({ version: 'one' }, admin);
    expect([bad.statusCode, bad.json()]).toEqual([400, { success: false, error: 'version must be a positive integer', code: 'validation', problems: [{ path: 'version', message: 'must be a positive integer' }] }]);
    const badHeader = await patch({}, admin, { 'if-match': 'yesterday' });
    expect(badHeader.statusCode).toBe(400);
    expect(badHeader.json().error).toMatch(/^If-Match/);
  });
});
