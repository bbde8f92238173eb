import { randomBytes } from 'node:crypto';
import type { ScryptCost } from '../../controller/auth/passwords.ts';
import type { TestApp, TestRuntime } from './runtime.ts';

export interface TestUser {
  userId: string;
  username: string;
  role: 'admin' | 'member';
}

export interface TestKey extends TestUser {
  apiKey: string;
  keyId: string;
  /** Headers for an A endpoint: { authorization: 'Bearer …' }. */
  headers: Record<string, string>;
}

export interface TestSession extends TestUser {
  csrfToken: string;
  /** Cookie header value carrying LASID (and ATN, RTN). */
  cookie: string;
  /** Headers for an S endpoint: { cookie, ctn }. */
  headers: Record<string, string>;
}

/** Cheap scrypt for test users, so suites stay fast (the stored hash names its own cost). */
export const TEST_PASSWORD_COST: ScryptCost = { N: 1024, r: 8, p: 1 };

let seq = 0;
/** Passwords of users the helpers created, so `loginAs` with the same username logs in again. */
const passwords = new Map<string, string>();

/** Creates (or reuses) a user in the store and returns it with its password. */
export async function createTestUser(
  t: TestRuntime,
  opts: { role?: 'admin' | 'member'; username?: string; password?: string; clients?: string[] } = {},
): Promise<TestUser & { password: string }> {
  const auth = t.rt.auth;
  const grant = (userId: string) => opts.clients?.length && auth.users.grant(userId, opts.clients, 'test');
  const username = opts.username ?? `user${++seq}-${randomBytes(3).toString('hex')}`;
  const memo = `${t.rt.config.dbPath}|${username.toLowerCase()}`;
  const existing = auth.users.findByName(username);
  if (existing) {
    const password = opts.password ?? passwords.get(memo);
    if (!password) throw new Error(`createTestUser: ${username} exists but its password is unknown`);
    grant(existing.userId);
    return { userId: existing.userId, username: existing.username, role: existing.role, password };
  }
  const password = opts.password ?? `pw-${randomBytes(12).toString('hex')}`;
  const user = await auth.users.create({ username, password, role: opts.role ?? 'admin', cost: TEST_PASSWORD_COST });
  passwords.set(memo, password);
  grant(user.userId);
  return { userId: user.userId, username: user.username, role: user.role, password };
}

/**
 * A user (role `admin` unless told) and an API key for it, optionally scoped to `clientId`.
 * `headers` is ready for `app.inject({ headers })` on an A endpoint.
 */
export async function createUserWithKey(t: TestApp | TestRuntime, opts: { role?: 'admin' | 'member'; clientId?: string; username?: string } = {}): Promise<TestKey> {
  // A member's key is within their grants (docs/contract/design.md): its client is granted with it.
  const user = await createTestUser(t, { ...opts, clients: opts.role === 'member' && opts.clientId ? [opts.clientId.toUpperCase()] : undefined });
  const key = t.rt.auth.createKey({ userId: user.userId, label: 'test key', clientId: opts.clientId?.toUpperCase(), createdBy: user.userId });
  return {
    userId: user.userId,
    username: user.username,
    role: user.role,
    apiKey: key.apiKey,
    keyId: key.keyId,
    headers: { authorization: `Bearer ${key.apiKey}` },
  };
}

/** Parses `Set-Cookie` headers of an inject response into name → value. */
export function cookiesOf(setCookie: string | string[] | number | undefined): Record<string, string> {
  const list = setCookie === undefined ? [] : Array.isArray(setCookie) ? setCookie : [String(setCookie)];
  const out: Record<string, string> = {};
  for (const c of list) {
    const [pair] = c.split(';');
    const eq = pair.indexOf('=');
    if (eq > 0) out[pair.slice(0, eq).trim()] = decodeURIComponent(pair.slice(eq + 1).trim());
  }
  return out;
}

/**
 * A user (role `admin` unless told) logged in through `POST /v1/auth/login`.
 * `headers` ({ cookie, ctn }) is ready for an S endpoint; put `userId` in the path.
 */
export async function loginAs(t: TestApp, opts: { role?: 'admin' | 'member'; username?: string; clients?: string[] } = {}): Promise<TestSession> {
  const user = await createTestUser(t, opts);
  const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', payload: { username: user.username, password: user.password } });
  if (res.statusCode !== 200) throw new Error(`loginAs: login answered ${res.statusCode} ${res.body}`);
  const body = res.json() as { userId: string; csrfToken: string };
  const jar = cookiesOf(res.headers['set-cookie']);
  const cookie = ['LASID', 'ATN', 'RTN'].map((n) => `${n}=${jar[n] ?? ''}`).join('; ');
  return {
    userId: body.userId,
    username: user.username,
    role: user.role,
    csrfToken: body.csrfToken,
    cookie,
    headers: { cookie, ctn: body.csrfToken },
  };
}
