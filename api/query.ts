import type { FastifyRequest } from 'fastify';

/** `?dryRun=true` (or `1`, or a bare `?dryRun`): validate and plan, write nothing. */
export function isDryRun(req: FastifyRequest): boolean {
  const v = (req.query as Record<string, unknown> | undefined)?.dryRun;
  return v === 'true' || v === '1' || v === '';
}
