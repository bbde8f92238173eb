import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { checkResponses } from '../../helpers/openapi.ts';
import { verifyPassword } from '../../../controller/auth/passwords.ts';
import { AuthService } from '../../../controller/auth/service.ts';
import { cookiesOf, createTestUser, loginAs } from '../../helpers/auth.ts';
import { makeTestRuntime, type TestApp } from '../../helpers/runtime.ts';
import { makeAuthApp } from './fixture.ts';

const INVALID = { success: false, error: 'Invalid username or password' };

describe('POST /v1/auth/login', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });
  const login = (payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: payload as object, headers });

  it('200 {success, userId, csrfToken} and cookies LASID (HttpOnly, SameSite=Strict, Path=/), ATN, RTN — no Secure over http', async () => {
    t = await makeAuthApp();
    const u = await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const res = await login({ username: 'alice', password: 'alice-password' });
    expect(res.statusCode).toBe(200);
    const body = res.json() as { csrfToken: string };
    expect(body).toEqual({ success: true, userId: u.userId, csrfToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });
    const set = res.headers['set-cookie'] as string[];
    expect(set).toHaveLength(3);
    expect(set[0]).toMatch(/^LASID=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Expires=Sun, 01 Mar 2026 18:00:00 GMT$/);
    expect(set[1]).toMatch(/^ATN=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict; Expires=Sun, 01 Mar 2026 10:15:00 GMT$/);
    expect(set[2]).toMatch(/^RTN=[A-Za-z0-9_-]{43}; Path=\/v1\/auth; HttpOnly; SameSite=Strict; Expires=Sun, 01 Mar 2026 18:00:00 GMT$/);
    const jar = cookiesOf(set);
    expect(new Set([jar.LASID, jar.ATN, jar.RTN, body.csrfToken]).size).toBe(4);
  });

  it('user names are case-insensitive', async () => {
    t = await makeAuthApp();
    await createTestUser(t, { username: 'Bob', password: 'bob-password' });
    expect((await login({ username: 'bob', password: 'bob-password' })).statusCode).toBe(200);
  });

  it('Secure cookies when the request came over https (trusted proxy)', async () => {
    t = await makeAuthApp({ trustProxy: true });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const res = await login({ username: 'alice', password: 'alice-password' }, { 'x-forwarded-proto': 'https' });
    for (const c of res.headers['set-cookie'] as string[]) expect(c).toContain('; Secure');
  });

  it('401 with the same body for a wrong password and an unknown user; no cookies', async () => {
    t = await makeAuthApp();
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    for (const payload of [{ username: 'alice', password: 'wrong-password' }, { username: 'nobody', password: 'alice-password' }]) {
      const res = await login(payload);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual(INVALID);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
  });

  it('an unknown user is checked against a dummy scrypt hash of the same cost as a real one', async () => {
    const cost = { N: 1 << 14, r: 8, p: 1 };
    const base = await makeTestRuntime();
    const checked: string[] = [];
    const auth = new AuthService({
      db: base.rt.db,
      clock: base.rt.clock,
      settings: { passwordCost: cost },
      verify: async (password, hash) => {
        checked.push(hash);
        return verifyPassword(password, hash);
      },
    });
    t = { ...base, app: checkResponses(await buildApp({ runtime: base.rt })), close: () => base.close() };
    await auth.ensureAdmin('alice', 'alice-password');
    expect(await auth.login('alice', 'not-the-password', '1.2.3.4')).toEqual({ ok: false, status: 401 });
    expect(await auth.login('nobody', 'not-the-password', '1.2.3.4')).toEqual({ ok: false, status: 401 });
    expect(checked).toHaveLength(2);
    const params = (h: string) => h.split('$').slice(0, 4).join('$');
    expect(params(checked[1])).toBe(params(checked[0]));
    expect(params(checked[0])).toBe('scrypt$16384$8$1');
  });

  it('400 with field paths for a missing or mistyped username / password', async () => {
    t = await makeAuthApp();
    const cases: [unknown, string][] = [
      [{}, 'username is required; password is required'],
      [{ username: 'a' }, 'password is required'],
      [{ username: 5, password: 'x' }, 'username must be a string'],
      [[], 'Request body must be a JSON object with username and password'],
    ];
    for (const [payload, error] of cases) {
      const res = await login(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ success: false, error, code: 'validation', problems: expect.any(Array) });
    }
  });

  it('429 with Retry-After after too many failures for one username — even with the right password — until the window ends', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 3, perIp: 100, windowMs: 60_000 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    for (let i = 0; i < 3; i++) expect((await login({ username: 'alice', password: 'guess' })).statusCode).toBe(401);
    const res = await login({ username: 'alice', password: 'alice-password' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.json()).toEqual({ success: false, error: 'Too many failed logins; retry in 60 s' });
    t.clock.advance(60_000);
    expect((await login({ username: 'alice', password: 'alice-password' })).statusCode).toBe(200);
  });

  it('429 after too many failures from one IP, across usernames', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 100, perIp: 3, windowMs: 60_000 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    for (const name of ['a', 'b', 'c']) expect((await login({ username: name, password: 'guess-1234' })).statusCode).toBe(401);
    const res = await login({ username: 'alice', password: 'alice-password' });
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toBe('60');
    const elsewhere = await login({ username: 'alice', password: 'alice-password' }, { 'x-forwarded-for': '10.0.0.9' });
    expect(elsewhere.statusCode).toBe(429); // no trustProxy: the header is ignored, same IP
  });

  it('successful logins are not counted', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 2, perIp: 2, windowMs: 60_000 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    for (let i = 0; i < 5; i++) expect((await login({ username: 'alice', password: 'alice-password' })).statusCode).toBe(200);
  });
});

describe('POST /v1/auth/refresh and /v1/auth/logout', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });
  const post = (url: string, cookie?: string) => t.app.inject({ method: 'POST', url, headers: cookie ? { cookie } : {} });
  const probe = (userId: string, cookie: string, ctn: string) => t.app.inject({ method: 'GET', url: `/probe/s/${userId}`, headers: { cookie, ctn } });

  it('refresh rotates ATN, RTN and the CSRF token; the old CTN stops working, the new one works', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const old = cookiesOf(s.cookie.split('; '));
    t.clock.advance(20 * 60_000);
    const res = await post('/v1/auth/refresh', `RTN=${old.RTN}`);
    expect(res.statusCode).toBe(200);
    const body = res.json() as { csrfToken: string };
    expect(body).toEqual({ success: true, userId: s.userId, csrfToken: expect.any(String) });
    const jar = cookiesOf(res.headers['set-cookie']);
    expect(Object.keys(jar).sort()).toEqual(['ATN', 'RTN']);
    expect(jar.ATN).not.toBe(old.ATN);
    expect(jar.RTN).not.toBe(old.RTN);
    const cookie = `LASID=${old.LASID}; ATN=${jar.ATN}; RTN=${jar.RTN}`;
    expect((await probe(s.userId, cookie, s.csrfToken)).json()).toEqual({ success: false, error: 'Invalid CSRF token' });
    expect((await probe(s.userId, cookie, body.csrfToken)).statusCode).toBe(200);
  });

  it('refresh moves the idle expiry forward, capped by the absolute lifetime', async () => {
    t = await makeAuthApp({ settings: { sessionTtls: { sessionMs: 3_600_000, absoluteMs: 3 * 3_600_000 } } });
    const s = await loginAs(t);
    let rtn = cookiesOf(s.cookie.split('; ')).RTN;
    let ctn = s.csrfToken;
    for (let i = 0; i < 3; i++) {
      t.clock.advance(50 * 60_000);
      const res = await post('/v1/auth/refresh', `RTN=${rtn}`);
      expect(res.statusCode).toBe(200);
      rtn = cookiesOf(res.headers['set-cookie']).RTN;
      ctn = (res.json() as { csrfToken: string }).csrfToken;
    }
    // 150 min after login: alive only thanks to the refreshes.
    expect((await probe(s.userId, s.cookie, ctn)).statusCode).toBe(200);
    t.clock.advance(30 * 60_000); // 180 min: the absolute cap
    expect((await probe(s.userId, s.cookie, ctn)).statusCode).toBe(401);
    expect((await post('/v1/auth/refresh', `RTN=${rtn}`)).statusCode).toBe(401);
  });

  it('401 Session required for refresh without or with an unknown RTN; cookies cleared', async () => {
    t = await makeAuthApp();
    for (const cookie of [undefined, 'RTN=forged']) {
      const res = await post('/v1/auth/refresh', cookie);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ success: false, error: 'Session required' });
      expect(Object.keys(cookiesOf(res.headers['set-cookie'])).sort()).toEqual(['ATN', 'LASID', 'RTN']);
    }
  });

  it("a disabled user's refresh answers 401 and their sessions are deleted; re-enabling does not revive them", async () => {
    t = await makeAuthApp();
    const admin = await loginAs(t, { role: 'admin' });
    const s = await loginAs(t, { role: 'member' });
    const second = await loginAs(t, { username: s.username });
    const sessions = () => (t.rt.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?').get(s.userId) as { n: number }).n;
    expect(sessions()).toBe(2);
    const patch = (disabled: boolean) =>
      t.app.inject({ method: 'PATCH', url: `/v1/bi/admin/users/${s.userId}/${admin.userId}`, headers: { cookie: admin.cookie, ctn: admin.csrfToken }, payload: { disabled } });
    expect((await patch(true)).statusCode).toBe(200);
    expect(sessions()).toBe(0);
    for (const session of [s, second]) {
      const res = await post('/v1/auth/refresh', `RTN=${cookiesOf(session.cookie.split('; ')).RTN}`);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ success: false, error: 'Session required' });
    }
    expect((await patch(false)).statusCode).toBe(200);
    expect((await post('/v1/auth/refresh', `RTN=${cookiesOf(s.cookie.split('; ')).RTN}`)).statusCode).toBe(401);
    expect((await probe(s.userId, s.cookie, s.csrfToken)).statusCode).toBe(401);
    expect(sessions()).toBe(0);
  });

  it('a session whose user was disabled by another process (bictl users disable) ends at its next refresh', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t, { role: 'member' });
    // Another process's write: only the row changes, this process's caches know nothing of it.
    t.rt.db.prepare('UPDATE users SET disabled_at = ? WHERE user_id = ?').run(new Date().toISOString(), s.userId);
    expect((await post('/v1/auth/refresh', `RTN=${cookiesOf(s.cookie.split('; ')).RTN}`)).statusCode).toBe(401);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?').get(s.userId)).toEqual({ n: 0 });
    t.rt.db.prepare('UPDATE users SET disabled_at = NULL WHERE user_id = ?').run(s.userId);
    expect((await post('/v1/auth/refresh', `RTN=${cookiesOf(s.cookie.split('; ')).RTN}`)).statusCode).toBe(401);
  });

  it('presenting a rotated refresh token again revokes the whole session', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const first = cookiesOf(s.cookie.split('; ')).RTN;
    const res = await post('/v1/auth/refresh', `RTN=${first}`);
    const ctn = (res.json() as { csrfToken: string }).csrfToken;
    expect((await post('/v1/auth/refresh', `RTN=${first}`)).statusCode).toBe(401);
    expect((await probe(s.userId, s.cookie, ctn)).json()).toEqual({ success: false, error: 'Session required' });
    expect((await post('/v1/auth/refresh', `RTN=${cookiesOf(res.headers['set-cookie']).RTN}`)).statusCode).toBe(401);
  });

  it('logout revokes the session server-side (a copied cookie stops working) and clears the cookies', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const other = await loginAs(t);
    const res = await post('/v1/auth/logout', s.cookie);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ success: true });
    for (const c of res.headers['set-cookie'] as string[]) expect(c).toMatch(/^(LASID|ATN|RTN)=; .*Expires=Thu, 01 Jan 1970 00:00:00 GMT$/);
    expect((await probe(s.userId, s.cookie, s.csrfToken)).json()).toEqual({ success: false, error: 'Session required' });
    expect((await post('/v1/auth/refresh', s.cookie)).statusCode).toBe(401);
    expect((await probe(other.userId, other.cookie, other.csrfToken)).statusCode).toBe(200);
    expect((await post('/v1/auth/logout')).json()).toEqual({ success: true });
  });

  it('GET /v1/auth/session tells the UI who is logged in', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t, { role: 'member', username: 'mo' });
    const res = await t.app.inject({ method: 'GET', url: '/v1/auth/session', headers: s.headers });
    expect(res.json()).toEqual({ success: true, userId: s.userId, username: 'mo', role: 'member' });
  });

  it('sessions and keys survive a restart', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const created = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, headers: s.headers, payload: { label: 'ci' } });
    const { apiKey } = created.json() as { apiKey: string };
    await t.app.close();
    const t2 = await t.restart();
    t = await makeAuthApp({ from: t2 });
    expect((await probe(s.userId, s.cookie, s.csrfToken)).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/probe/a', headers: { 'x-api-key': apiKey } })).statusCode).toBe(200);
  });
});
