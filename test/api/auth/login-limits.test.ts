import { afterEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { AuthService } from '../../../controller/auth/service.ts';
import { createTestUser, loginAs } from '../../helpers/auth.ts';
import { makeTestRuntime, type TestApp } from '../../helpers/runtime.ts';
import { makeAuthApp } from './fixture.ts';

/** Limits that must hold when the attempts arrive together, not one after the other. */
describe('login limits under concurrency', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });
  const login = (payload: unknown, headers: Record<string, string> = {}) => t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: payload as object, headers });

  it('40 concurrent wrong passwords get exactly as many tries as 40 sequential ones', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 10, perIp: 1000, windowMs: 60_000, queuedHashes: 100 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const answers = await Promise.all(Array.from({ length: 40 }, () => login({ username: 'alice', password: 'wrong-guess' })));
    const codes = answers.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 401)).toHaveLength(10);
    expect(codes.filter((c) => c === 429)).toHaveLength(30);
  });

  it('a right password inside a burst of 150 is refused once the limit is hit', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 10, perIp: 1000, windowMs: 60_000, queuedHashes: 200 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const burst = Array.from({ length: 150 }, (_, i) => login({ username: 'alice', password: i === 75 ? 'alice-password' : 'wrong-guess' }));
    const answers = await Promise.all(burst);
    expect(answers[75].statusCode).toBe(429);
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(0);
    expect(answers.filter((r) => r.statusCode === 401)).toHaveLength(10);
  });

  it('a success gives its reserved attempt back; in-flight logins count until they fail', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 2, perIp: 2, windowMs: 60_000 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    for (let i = 0; i < 4; i++) expect((await login({ username: 'alice', password: 'alice-password' })).statusCode).toBe(200);
    expect((await login({ username: 'alice', password: 'wrong' })).statusCode).toBe(401);
    expect((await login({ username: 'alice', password: 'alice-password' })).statusCode).toBe(200);
  });

  it('at most `concurrentHashes` password hashes run at once; past the queue a login is refused at once (503, Retry-After)', async () => {
    const base = await makeTestRuntime();
    let running = 0;
    let peak = 0;
    const gates: (() => void)[] = [];
    let hold = true;
    const auth = new AuthService({
      db: base.rt.db,
      clock: base.rt.clock,
      settings: { passwordCost: { N: 1024, r: 8, p: 1 }, login: { perUsername: 100, perIp: 100, windowMs: 60_000, concurrentHashes: 2, queuedHashes: 3 } },
      verify: async () => {
        running += 1;
        peak = Math.max(peak, running);
        if (hold) await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        return false;
      },
    });
    t = { ...base, app: await buildApp({ runtime: base.rt }), close: () => base.close() };
    await auth.warmUp();
    let settled = 0;
    const pending = Array.from({ length: 5 }, (_, i) => auth.login(`user${i}`, 'wrong-guess', '10.0.0.1').finally(() => (settled += 1)));
    expect(await auth.login('late', 'wrong-guess', '10.0.0.1')).toEqual({ ok: false, status: 503, retryAfterSeconds: 1 });
    while (settled < 5) {
      gates.splice(0).forEach((open) => open());
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(pending)).toEqual(Array.from({ length: 5 }, () => ({ ok: false, status: 401 })));
    expect(peak).toBe(2);
    hold = false;
    // The refused login was never tried, so it did not count: 5 failures from the IP, not 6.
    expect((await auth.login('late', 'wrong-guess', '10.0.0.1')).ok).toBe(false);
    expect(peak).toBe(2);
  });

  it('a hash slot rests as long as its hash took before the next hash starts (half a core at most)', async () => {
    const base = await makeTestRuntime();
    const rests: number[] = [];
    const wake: (() => void)[] = [];
    let verified = 0;
    const auth = new AuthService({
      db: base.rt.db,
      clock: base.rt.clock,
      scheduler: (fn, ms) => {
        rests.push(ms);
        wake.push(fn);
        return () => {};
      },
      settings: { passwordCost: { N: 1024, r: 8, p: 1 }, login: { perUsername: 100, perIp: 100, windowMs: 60_000, concurrentHashes: 1 } },
      verify: async () => {
        verified += 1;
        const t0 = performance.now();
        while (performance.now() - t0 < 5);
        return false;
      },
    });
    t = { ...base, app: await buildApp({ runtime: base.rt }), close: () => base.close() };
    await auth.warmUp();
    const first = auth.login('a', 'wrong-guess', '10.0.0.1');
    const second = auth.login('b', 'wrong-guess', '10.0.0.1');
    expect(await first).toEqual({ ok: false, status: 401 });
    await new Promise((r) => setImmediate(r));
    // Answered at once, but the slot rests: the second hash has not started.
    expect(verified).toBe(1);
    expect(rests).toHaveLength(1);
    expect(rests[0]).toBeGreaterThanOrEqual(5);
    wake.shift()?.();
    expect(await second).toEqual({ ok: false, status: 401 });
    expect(verified).toBe(2);
  });

  it('503 over HTTP when the hash queue is full, with Retry-After and a JSON error', async () => {
    t = await makeAuthApp({ settings: { login: { perUsername: 1000, perIp: 1000, windowMs: 60_000, concurrentHashes: 1, queuedHashes: 0 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const answers = await Promise.all(Array.from({ length: 5 }, () => login({ username: 'alice', password: 'wrong-guess' })));
    const busy = answers.filter((r) => r.statusCode === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0].json()).toEqual({ success: false, error: 'Too many logins in progress; retry in 1 s' });
    expect(busy[0].headers['retry-after']).toBe('1');
  });
});

describe('BI_TRUST_PROXY: the client address is the one the trusted proxy saw', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });
  const login = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'alice', password: 'wrong-guess' }, headers });

  // X-Forwarded-For as a proxy in front forwards it: whatever the client sent, then the
  // address the proxy saw. The client rotates its own entries to dodge the per-IP limit.
  const spoofed = (i: number, seen = '203.0.113.7') => ({ 'x-forwarded-for': `198.51.100.${i}, ${seen}` });

  for (const [label, trustProxy] of [
    ['true (one hop)', true],
    ['a hop count', { hops: 1 }],
    ['the proxy address', { proxies: ['127.0.0.1'] }],
    ['a CIDR', { proxies: ['127.0.0.0/8'] }],
  ] as const) {
    it(`${label}: entries the client wrote are never the address`, async () => {
      t = await makeAuthApp({ trustProxy, settings: { login: { perUsername: 1000, perIp: 3, windowMs: 60_000 } } });
      await createTestUser(t, { username: 'alice', password: 'alice-password' });
      for (let i = 0; i < 3; i++) expect((await login(spoofed(i))).statusCode).toBe(401);
      expect((await login(spoofed(99))).statusCode).toBe(429);
      // Another client behind the same proxy is a different address.
      expect((await login(spoofed(1, '203.0.113.8'))).statusCode).toBe(401);
    });
  }

  it('a proxy list that does not hold the peer trusts no header at all', async () => {
    t = await makeAuthApp({ trustProxy: { proxies: ['10.9.9.9'] }, settings: { login: { perUsername: 1000, perIp: 3, windowMs: 60_000 } } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    for (let i = 0; i < 3; i++) expect((await login(spoofed(i, `203.0.113.${i}`))).statusCode).toBe(401);
    expect((await login(spoofed(9, '203.0.113.9'))).statusCode).toBe(429);
    await t.close();
    t = await makeAuthApp({ trustProxy: { proxies: ['10.9.9.9'] } });
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'alice', password: 'alice-password' }, headers: { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.50' } });
    expect(res.statusCode).toBe(200);
    for (const c of res.headers['set-cookie'] as string[]) expect(c).not.toContain('; Secure');
  });
});

describe('Cache-Control: no-store on answers carrying a secret or token', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it('login (success and failure), refresh and key creation', async () => {
    t = await makeAuthApp();
    await createTestUser(t, { username: 'alice', password: 'alice-password' });
    const ok = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'alice', password: 'alice-password' } });
    expect(ok.headers['cache-control']).toBe('no-store');
    const bad = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: 'alice', password: 'nope' } });
    expect(bad.headers['cache-control']).toBe('no-store');
    const s = await loginAs(t, { username: 'bob' });
    const key = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, payload: { label: 'k' }, headers: s.headers });
    expect(key.statusCode).toBe(201);
    expect(key.headers['cache-control']).toBe('no-store');
    const refresh = await t.app.inject({ method: 'POST', url: '/v1/auth/refresh', headers: { cookie: s.cookie } });
    expect(refresh.statusCode).toBe(200);
    expect(refresh.headers['cache-control']).toBe('no-store');
  });
});
