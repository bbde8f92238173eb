import type { FastifyInstance } from 'fastify';

// Filled in by its issue.
export default async function routes(_app: FastifyInstance): Promise<void> {}
