import type { FastifyRequest } from 'fastify';
import type { Principal } from '../../controller/auth/principal.ts';
import { UnauthenticatedError } from '../../controller/errors.ts';
import './types.ts';

/**
 * The one way a route gets its caller. The guards set it; a route reached without one (a guard
 * forgotten) answers 401, never a 500.
 */
export function principalOf(req: FastifyRequest): Principal {
  if (!req.principal) throw new UnauthenticatedError(req.url.startsWith('/v1/sdk/') && !/\/U\d{4}A\d{5}$/.test(req.url.split('?')[0]) ? 'API key required' : 'Session required');
  return req.principal;
}
