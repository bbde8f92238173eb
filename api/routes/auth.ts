import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RotatedTokens } from '../../controller/auth/sessions.ts';
import { ACCESS_COOKIE, REFRESH_COOKIE, REFRESH_PATH, SESSION_COOKIE, isHttps, readCookie, serializeCookie, setCookies } from '../auth/cookies.ts';
import { principalOf } from '../auth/principal.ts';
import { authSchemas } from '../schemas/auth.ts';

const INVALID_LOGIN = { success: false, error: 'Invalid username or password' } as const;
const LOGINS_BUSY = { success: false, error: 'Too many logins in progress; retry in 1 s' } as const;
const SESSION_REQUIRED = { success: false, error: 'Session required' } as const;

function tokenCookies(req: FastifyRequest, tokens: RotatedTokens & { sessionId?: string }): string[] {
  const secure = isHttps(req);
  const cookies = [
    serializeCookie(ACCESS_COOKIE, tokens.accessToken, { secure, expires: tokens.accessExpiresAt }),
    serializeCookie(REFRESH_COOKIE, tokens.refreshToken, { secure, expires: tokens.expiresAt, path: REFRESH_PATH }),
  ];
  if (tokens.sessionId) cookies.unshift(serializeCookie(SESSION_COOKIE, tokens.sessionId, { secure, expires: tokens.expiresAt }));
  return cookies;
}

function clearCookies(req: FastifyRequest, reply: FastifyReply): void {
  const secure = isHttps(req);
  const past = new Date(0);
  setCookies(reply, [
    serializeCookie(SESSION_COOKIE, '', { secure, expires: past }),
    serializeCookie(ACCESS_COOKIE, '', { secure, expires: past }),
    serializeCookie(REFRESH_COOKIE, '', { secure, expires: past, path: REFRESH_PATH }),
  ]);
}

/**
 * Browser sessions: login (cookies LASID, ATN, RTN and a CSRF token for the CTN header),
 * refresh (rotates ATN, RTN and the CSRF token), logout (revoked in the store).
 */
export default async function authRoutes(app: FastifyInstance): Promise<void> {
  // The body is checked at the edge (schemas/api.schema.json `LoginRequest`).
  app.post<{ Body: { username: string; password: string } }>('/v1/auth/login', { config: { noStore: true }, schema: authSchemas.login }, async (req, reply) => {
    const { username, password } = req.body;
    const result = await app.runtime.auth.login(username, password, req.ip);
    if (!result.ok) {
      app.runtime.metrics.authRefused({ method: 'login', reason: result.status === 429 ? 'rate_limited' : 'bad_credentials' });
      if (result.status === 429) {
        return reply
          .status(429)
          .header('retry-after', String(result.retryAfterSeconds))
          .send({ success: false, error: `Too many failed logins; retry in ${result.retryAfterSeconds} s` });
      }
      if (result.status === 503) {
        return reply.status(503).header('retry-after', String(result.retryAfterSeconds)).send(LOGINS_BUSY);
      }
      req.log.info({ username }, 'login refused');
      return reply.status(401).send(INVALID_LOGIN);
    }
    req.log.info({ userId: result.user.userId }, 'login');
    setCookies(reply, tokenCookies(req, result.tokens));
    void reply.header('cache-control', 'no-store');
    return { success: true, userId: result.user.userId, csrfToken: result.tokens.csrfToken };
  });

  app.post('/v1/auth/refresh', { config: { noStore: true }, schema: authSchemas.refresh }, async (req, reply) => {
    const refreshToken = readCookie(req, REFRESH_COOKIE);
    const result = refreshToken ? app.runtime.auth.sessions.refresh(refreshToken) : undefined;
    if (!result?.ok) {
      if (result?.reason === 'reused') req.log.warn('refresh token reused: session revoked');
      clearCookies(req, reply);
      return reply.status(401).send(SESSION_REQUIRED);
    }
    setCookies(reply, tokenCookies(req, result.tokens));
    void reply.header('cache-control', 'no-store');
    return { success: true, userId: result.userId, csrfToken: result.tokens.csrfToken };
  });

  app.post('/v1/auth/logout', { schema: authSchemas.logout }, async (req, reply) => {
    app.runtime.auth.sessions.revoke({ sessionId: readCookie(req, SESSION_COOKIE), refreshToken: readCookie(req, REFRESH_COOKIE) });
    clearCookies(req, reply);
    return { success: true };
  });

  /** Who the session belongs to (the UI asks after a reload). */
  app.get('/v1/auth/session', { schema: authSchemas.session }, async (req) => {
    const p = principalOf(req);
    return { success: true, userId: p.userId, username: p.username, role: p.role };
  });
}
