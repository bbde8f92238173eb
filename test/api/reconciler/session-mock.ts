import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SessionGuardOptions } from '../../../api/auth/guards.ts';

/**
 * Stand-in for the session guard (the authentication issue's): `x-test-role: admin|member`
 * is a session, no header is none. Lets the reconciler routes be tested on their own.
 */
export function fakeRequireSession(_app: unknown, opts: SessionGuardOptions = {}) {
  return async (req: FastifyRequest, reply: FastifyReply) => {
    const role = req.headers['x-test-role'];
    if (role !== 'admin' && role !== 'member') return reply.status(401).send({ success: false, error: 'Session required' });
    if (opts.role === 'admin' && role !== 'admin') return reply.status(403).send({ success: false, error: 'Admin role required' });
    req.principal = { userId: 'U2026A00001', username: 'alice', role, via: 'session' };
  };
}
