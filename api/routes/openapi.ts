import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ROOT } from '../../controller/paths.ts';
import { PUBLIC_ROUTE } from '../auth/guards.ts';
import { HIDDEN } from '../schemas/common.ts';

const docsPage = readFileSync(join(ROOT, 'api', 'openapi', 'docs.html'), 'utf8');

/** The OpenAPI document, generated from the routes' schemas (api/schemas/), and a page that reads it. */
export default async function openapiRoutes(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { config: PUBLIC_ROUTE, schema: HIDDEN }, async () => app.swagger());
  app.get('/docs', { config: PUBLIC_ROUTE, schema: HIDDEN }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(docsPage));
}
