import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import { sha256 } from '../../controller/hash.ts';
import { accessOf, type Access } from '../schemas/common.ts';
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
 * Guard of API-key endpoints (A): `Authorization: Bearer <key>` or `x-api-key: <key>`.
 * Sets `req.principal`; answers 401 {error:'API key required' | 'Invalid API key' | 'API key expired'},
 * 429 {error:'Rate limit exceeded'} with Retry-After past the per-key limit.
 */
export function requireApiKey(app: FastifyInstance): onRequestAsyncHookHandler {
  return async (req, reply) => {
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
  };
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
 * Guard of browser-session endpoints (S), checked in this order: cookie LASID (401
 * Session required), header CTN (403 Invalid CSRF token), `{userId}` in the path equal to the
 * session's user (403 Forbidden), the role (403 Admin role required). Sets `req.principal`.
 */
export function requireSession(app: FastifyInstance, opts: SessionGuardOptions = {}): onRequestAsyncHookHandler {
  const checkCsrf = opts.csrf ?? true;
  return async (req, reply) => {
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
  };
}

/** The worker token (`Authorization: Bearer <BI_WORKER_TOKEN>`) of queue mode's worker reports; 401 otherwise. */
function requireWorker(app: FastifyInstance): onRequestAsyncHookHandler {
  const token = app.runtime.config.queue?.workerToken;
  const tokenHash = token ? sha256(token) : undefined;
  return async (req, reply) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (tokenHash && m && matchesHash(m[1], tokenHash)) return;
    return reply
      .status(401)
      .header('www-authenticate', 'Bearer realm="workers"')
      .send({ success: false, error: tokenHash ? 'Worker token required (BI_WORKER_TOKEN)' : 'BI_WORKER_TOKEN is not set on the controller: it accepts no worker' });
  };
}

/** The guard of an access level, one per app and level. */
function guardFor(app: FastifyInstance, access: Access): onRequestAsyncHookHandler | undefined {
  switch (access.auth) {
    case 'apiKey':
      return requireApiKey(app);
    case 'session':
      return requireSession(app, access.csrfFromQuery ? { csrfFromQuery: true } : {});
    case 'admin':
      return requireSession(app, { role: 'admin' });
    case 'worker':
      return requireWorker(app);
    case 'public':
      return undefined;
  }
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `public`: a page that is not API (schema HIDDEN), which anyone may fetch (PUBLIC_ROUTE). */
    access?: 'public';
  }
}

/** Route config of the pages that are not API (`/ui`, `/docs`: schema HIDDEN), which anyone may fetch. */
export const PUBLIC_ROUTE = { access: 'public' as const };

/**
 * Every route states who may call it once, in its schema (`route({ auth })`, api/schemas/common.ts);
 * this puts the matching guard first in its `onRequest` hooks, so a caller is refused before its body
 * is read or anything is validated (401 before 400). The undocumented pages say `config: PUBLIC_ROUTE`.
 * Called for each route at registration (buildApp's onRoute hook): a route that states nothing, or
 * states it twice, stops the app from starting.
 */
export function installGuard(app: FastifyInstance, route: RouteOptions): void {
  const access = accessOf(route.schema);
  const isPublic = route.config?.access === 'public';
  const where = `route ${[route.method].flat().join(',')} ${route.url}`;
  if (access && isPublic) throw new Error(`${where} states its access twice: its schema's auth is enough`);
  if (!access && !isPublic) throw new Error(`${where} declares no authorization: give it a schema from route({ auth }), or config PUBLIC_ROUTE for a page that is not API`);
  if (!access) return;
  let guards = GUARDS.get(app);
  if (!guards) GUARDS.set(app, (guards = new Map()));
  const key = `${access.auth}${access.csrfFromQuery ? '+ctn' : ''}`;
  if (!guards.has(key)) guards.set(key, guardFor(app, access));
  const guard = guards.get(key);
  if (guard) route.onRequest = [guard, ...[route.onRequest ?? []].flat()];
}

const GUARDS = new WeakMap<FastifyInstance, Map<string, onRequestAsyncHookHandler | undefined>>();
