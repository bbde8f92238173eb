import { afterEach, describe, expect, it } from 'vitest';
import { createTestUser, loginAs } from '../../helpers/auth.ts';
import type { TestApp } from '../../helpers/runtime.ts';
import { makeAuthApp } from './fixture.ts';

describe('requireSession (S endpoints)', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });
  const get = (url: string, headers: Record<string, string> = {}) => t.app.inject({ method: 'GET', url, headers });

  it('a valid session with its CTN passes and sets the principal', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t, { role: 'member', username: 'mia' });
    const res = await get(`/probe/s/${s.userId}`, s.headers);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ principal: { userId: s.userId, username: 'mia', role: 'member', via: 'session', tenants: [] } });
  });

  it('a disabled user\'s session answers 401 Session required at once; a demoted admin loses admin routes at once', async () => {
    t = await makeAuthApp();
    const auth = t.rt.auth;
    const s = await loginAs(t, { role: 'admin', username: 'ada' });
    await loginAs(t, { role: 'admin', username: 'bob' });
    expect((await get(`/probe/admin/${s.userId}`, s.headers)).statusCode).toBe(200);
    auth.users.update(s.userId, { role: 'member' });
    const demoted = await get(`/probe/admin/${s.userId}`, s.headers);
    expect(demoted.statusCode).toBe(403);
    expect(demoted.json()).toEqual({ success: false, error: 'Admin role required' });
    auth.users.update(s.userId, { disabled: true });
    const disabled = await get(`/probe/s/${s.userId}`, s.headers);
    expect(disabled.statusCode).toBe(401);
    expect(disabled.json()).toEqual({ success: false, error: 'Session required' });
    // Nor can they log in again while disabled.
    const login = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'ada', password: (await createTestUser(t, { username: 'ada' })).password } });
    expect(login.statusCode).toBe(401);
  });

  it('LASID and CTN alone are enough (the key endpoints show only those)', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const lasid = s.cookie.split('; ').find((c) => c.startsWith('LASID='));
    expect((await get(`/probe/s/${s.userId}`, { cookie: lasid ?? '', ctn: s.csrfToken })).statusCode).toBe(200);
  });

  it('401 Session required: no cookie, unknown LASID, an API key instead of a session', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    for (const headers of [{ ctn: s.csrfToken }, { cookie: 'LASID=forged', ctn: s.csrfToken }, { cookie: 'ATN=x; RTN=y', ctn: s.csrfToken }] as Record<string, string>[]) {
      const res = await get(`/probe/s/${s.userId}`, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ success: false, error: 'Session required' });
    }
  });

  it('401 Session required once the session expired (8 h idle by default)', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    t.clock.advance(8 * 3_600_000 - 1);
    expect((await get(`/probe/s/${s.userId}`, s.headers)).statusCode).toBe(200);
    t.clock.advance(1);
    expect((await get(`/probe/s/${s.userId}`, s.headers)).json()).toEqual({ success: false, error: 'Session required' });
  });

  it('403 Invalid CSRF token when CTN is missing or wrong (another session’s token too), also on GET', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const other = await loginAs(t);
    for (const ctn of [undefined, '', 'wrong', other.csrfToken, `${s.csrfToken}x`]) {
      const headers: Record<string, string> = { cookie: s.cookie };
      if (ctn !== undefined) headers.ctn = ctn;
      const res = await get(`/probe/s/${s.userId}`, headers);
      expect(res.statusCode).toBe(403);
      expect(res.json()).toEqual({ success: false, error: 'Invalid CSRF token' });
    }
  });

  it('403 Forbidden for another user’s {userId}; routes without {userId} skip that check', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    const other = await loginAs(t);
    const res = await get(`/probe/s/${other.userId}`, s.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ success: false, error: 'Forbidden' });
    expect((await get('/probe/s', s.headers)).statusCode).toBe(200);
  });

  it('403 Admin role required for a member on an admin route; an admin passes', async () => {
    t = await makeAuthApp();
    const member = await loginAs(t, { role: 'member' });
    const admin = await loginAs(t, { role: 'admin' });
    const res = await get(`/probe/admin/${member.userId}`, member.headers);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ success: false, error: 'Admin role required' });
    expect((await get(`/probe/admin/${admin.userId}`, admin.headers)).statusCode).toBe(200);
  });

  it('checks in order: session, then CSRF, then userId, then role', async () => {
    t = await makeAuthApp();
    const member = await loginAs(t, { role: 'member' });
    const other = await loginAs(t, { role: 'member' });
    // No session and no CTN on another user's admin path → the session answer.
    expect((await get(`/probe/admin/${other.userId}`)).json()).toEqual({ success: false, error: 'Session required' });
    // Session, wrong CTN, another user, no role → the CSRF answer.
    expect((await get(`/probe/admin/${other.userId}`, { cookie: member.cookie, ctn: 'x' })).json()).toEqual({ success: false, error: 'Invalid CSRF token' });
    // Right CTN, another user, no role → Forbidden before the role.
    expect((await get(`/probe/admin/${other.userId}`, member.headers)).json()).toEqual({ success: false, error: 'Forbidden' });
  });

  it('csrf:false skips the CTN check only', async () => {
    t = await makeAuthApp();
    const s = await loginAs(t);
    expect((await get(`/probe/nocsrf/${s.userId}`, { cookie: s.cookie })).statusCode).toBe(200);
    expect((await get(`/probe/nocsrf/${s.userId}`)).statusCode).toBe(401);
  });
});
