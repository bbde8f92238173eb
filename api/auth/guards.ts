import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { matchesHash } from '../../controller/auth/tokens.ts';
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
  return async (req, reply) => {
    const result = app.runtime.auth.authenticateKey(presentedApiKey(req));
    if (!result.ok) {
      app.runtime.metrics.authRefused({ method: 'api_key', reason: KEY_REFUSALS[result.error] });
      if (result.status === 429) void reply.header('retry-after', String(result.retryAfterSeconds));
      return reply.status(result.status).send({ error: result.error });
    }
    const { key } = result;
    req.principal = {
      userId: key.userId,
      username: key.username,
      role: key.role,
      via: 'apiKey',
      keyId: key.keyId,
      ...(key.clientId ? { clientScope: key.clientId } : {}),
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
 * preHandler for browser-session endpoints (S), checked in this order: cookie LASID (401
 * Session required), header CTN (403 Invalid CSRF token), `{userId}` in the path equal to the
 * session's user (403 Forbidden), the role (403 Admin role required). Sets `req.principal`.
 */
export function requireSession(app: FastifyInstance, opts: SessionGuardOptions = {}): preHandlerAsyncHookHandler {
  const checkCsrf = opts.csrf ?? true;
  return async (req, reply) => {
    const sessionId = readCookie(req, SESSION_COOKIE);
    const session = sessionId ? app.runtime.auth.sessions.find(sessionId) : undefined;
    const refuse = (reason: 'missing' | 'csrf' | 'forbidden' | 'role') => app.runtime.metrics.authRefused({ method: 'session', reason });
    if (!session) {
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
    if (opts.role === 'admin' && session.role !== 'admin') {
      refuse('role');
      return reply.status(403).send({ success: false, error: 'Admin role required' });
    }
    req.principal = { userId: session.userId, username: session.username, role: session.role, via: 'session' };
  };
}
