import type { FastifyInstance } from 'fastify';

// The git push hook (filled in with git mode).
export default async function webhookRoutes(_app: FastifyInstance): Promise<void> {}
