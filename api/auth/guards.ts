import type { FastifyInstance, preHandlerAsyncHookHandler } from 'fastify';
import './types.ts';

/**
 * preHandler for API-key endpoints (A): `Authorization: Bearer <key>` or `x-api-key: <key>`.
 * Sets `req.principal`; answers 401 {error:'API key required' | 'Invalid API key' | 'API key expired'}.
 * (Implemented by the authentication issue.)
 */
export function requireApiKey(_app: FastifyInstance): preHandlerAsyncHookHandler {
  return async (_req, reply) => {
    await reply.status(401).send({ error: 'API key required' });
  };
}

export interface SessionGuardOptions {
  /** Role needed beyond a valid session. */
  role?: 'admin';
  /** Whether the CTN header is checked (default true: every S endpoint). */
  csrf?: boolean;
}

/**
 * preHandler for browser-session endpoints (S): cookie LASID, header CTN, and `{userId}` in the
 * path equal to the session's user. Sets `req.principal`; 401 Session required, 403 Invalid CSRF token,
 * 403 for another user's path or a missing role. (Implemented by the authentication issue.)
 */
export function requireSession(_app: FastifyInstance, _opts: SessionGuardOptions = {}): preHandlerAsyncHookHandler {
  return async (_req, reply) => {
    await reply.status(401).send({ success: false, error: 'Session required' });
  };
}
