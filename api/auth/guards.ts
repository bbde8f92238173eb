import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { matchesHash } from '../../controller/auth/tokens.ts';
import { ADMIN_REQUIRED, effectiveTenants } from '../../controller/authz/index.ts';
import { SESSION_COOKIE, readCookie } from './cookies.ts';
import './types.ts';

/** The key from `Authorization: Bearer <key>` or `x-api-key: <key>`. */
export function presentedApiKey(req: FastifyRequest): string | undefined {
  const auth = req.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m) return m[1];
  }
  const header = req.headers['x-api-key'];
  const value = Array.isArray(header) ? header[0] : header;
  return value?.trim() || undefined;
}

/** An API-key refusal's error text → the reason label of `bi_auth_refusals_total`. */
const KEY_REFUSALS = {
  'API key required': 'missing',
  'Invalid API key': 'invalid',
  'API key expired': 'expired',
  'Rate limit exceeded': 'rate_limited',
} as const;

/**
 * preHandler for API-key endpoints (A): `Authorization: Bearer <key>` or `x-api-key: <key>`.
 * Sets `req.principal`; answers 401 {error:'API key required' | 'Invalid API key' | 'API key expired'},
 * 429 {error:'Rate limit exceeded'} with Retry-After past the per-key limit.
 */
export function requireApiKey(app: FastifyInstance): preHandlerAsyncHookHandler {
  return guard(async (req, reply) => {
    const auth = app.runtime.auth;
    const result = auth.authenticateKey(presentedApiKey(req));
    if (!result.ok) {
      app.runtime.metrics.authRefused({ method: 'api_key', reason: KEY_REFUSALS[result.error] });
      if (result.status === 429) void reply.header('retry-after', String(result.retryAfterSeconds));
      return reply.status(result.status).send({ error: result.error });
    }
    const { key } = result;
    // The key is cached; its user's rights are not: a disabled or deleted user's key dies now.
    const rights = auth.rights.of(key.userId);
    if (!rights) {
      app.runtime.metrics.authRefused({ method: 'api_key', reason: KEY_REFUSALS['Invalid API key'] });
      return reply.status(401).send({ error: 'Invalid API key' });
    }
    const clientScope = key.clientId ?? undefined;
    req.principal = {
      userId: key.userId,
      username: key.username,
      role: rights.role,
      via: 'apiKey',
      keyId: key.keyId,
      ...(clientScope ? { clientScope } : {}),
      tenants: effectiveTenants(rights, clientScope, 'apiKey'),
    };
  });
}

export interface SessionGuardOptions {
  /** Role needed beyond a valid session. */
  role?: 'admin';
  /** Whether the CTN header is checked (default true: every S endpoint). */
  csrf?: boolean;
  /**
   * Also accept the token as `?ctn=` (read-only GET streams: a browser's EventSource cannot
   * set headers). The token is still required.
   */
  csrfFromQuery?: boolean;
}

/**
 * preHandler for browser-session endpoints (S), checked in this order: cookie LASID (401
 * Session required), header CTN (403 Invalid CSRF token), `{userId}` in the path equal to the
 * session's user (403 Forbidden), the role (403 Admin role required). Sets `req.principal`.
 */
export function requireSession(app: FastifyInstance, opts: SessionGuardOptions = {}): preHandlerAsyncHookHandler {
  const checkCsrf = opts.csrf ?? true;
  return guard(async (req, reply) => {
    const auth = app.runtime.auth;
    const sessionId = readCookie(req, SESSION_COOKIE);
    const session = sessionId ? auth.sessions.find(sessionId) : undefined;
    const refuse = (reason: 'missing' | 'csrf' | 'forbidden' | 'role') => app.runtime.metrics.authRefused({ method: 'session', reason });
    // The user's current rights, not the session's: a disabled or deleted user's session dies now.
    const rights = session && auth.rights.of(session.userId);
    if (!session || !rights) {
      refuse('missing');
      return reply.status(401).send({ success: false, error: 'Session required' });
    }
    if (checkCsrf) {
      const header = req.headers.ctn;
      const query = opts.csrfFromQuery ? (req.query as Record<string, unknown> | undefined)?.ctn : undefined;
      const presented = (Array.isArray(header) ? header[0] : header) ?? (typeof query === 'string' ? query : undefined);
      if (!presented || !matchesHash(presented, session.csrfHash)) {
        refuse('csrf');
        return reply.status(403).send({ success: false, error: 'Invalid CSRF token' });
      }
    }
    const params = req.params as Record<string, string | undefined> | undefined;
    if (params?.userId !== undefined && params.userId !== session.userId) {
      refuse('forbidden');
      return reply.status(403).send({ success: false, error: 'Forbidden' });
    }
    if (opts.role === 'admin' && rights.role !== 'admin') {
      refuse('role');
      return reply.status(403).send({ success: false, error: ADMIN_REQUIRED });
    }
    req.principal = { userId: session.userId, username: session.username, role: rights.role, via: 'session', tenants: effectiveTenants(rights, undefined, 'session') };
  });
}

const guards = new WeakSet<object>();

/** Marks a preHandler as an authentication guard (the route check at registration looks for one). */
function guard(fn: preHandlerAsyncHookHandler): preHandlerAsyncHookHandler {
  guards.add(fn);
  return fn;
}

/** Route config of the routes anyone may call (health, login, the UI's files, the HMAC webhook). */
export const PUBLIC_ROUTE = { access: 'public' as const };

/**
 * Every route declares who may call it: a guard from this module in its preHandler, or
 * `config: PUBLIC_ROUTE`. Called for each route at registration (buildApp's onRoute hook), so
 * a route added without a declaration stops the app from starting.
 */
export function assertAuthDeclared(route: { method: string | string[]; url: string; preHandler?: unknown; config?: unknown }): void {
  const handlers = [route.preHandler].flat().filter((h): h is object => typeof h === 'function');
  if (handlers.some((h) => guards.has(h))) return;
  if ((route.config as { access?: string } | undefined)?.access === 'public') return;
  throw new Error(`route ${[route.method].flat().join(',')} ${route.url} declares no authorization: add requireApiKey/requireSession as its preHandler, or config PUBLIC_ROUTE`);
}
