import type { FastifyInstance } from 'fastify';
import { healthSchemas } from '../schemas/health.ts';

export default async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/healthz', { schema: healthSchemas.liveness }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: healthSchemas.readiness }, async (_req, reply) => {
    const r = app.runtime.reconciler;
    // Git mode: why the remote cannot be synced right now (unreachable, the branch deleted).
    const gitError = app.runtime.gitSource?.lastError;
    if (!r.ready) return reply.status(503).send({ status: 'starting', ready: false, ...(gitError ? { gitError } : {}) });
    return { status: 'ready', ready: true, ...(r.pruneBlocked ? { pruneBlocked: r.pruneBlocked.keys.length } : {}), ...(gitError ? { gitError } : {}) };
  });
}
