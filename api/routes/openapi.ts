import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { ROOT } from '../../controller/paths.ts';
import { buildOpenApi } from '../openapi/document.ts';
import { PUBLIC_ROUTE } from '../auth/guards.ts';


const docsPage = readFileSync(join(ROOT, 'api', 'openapi', 'docs.html'), 'utf8');
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export default async function openapiRoutes(app: FastifyInstance): Promise<void> {
  const doc = buildOpenApi(app.runtime.schemas, version);
  app.get('/openapi.json', { config: PUBLIC_ROUTE }, async () => doc);
  app.get('/docs', { config: PUBLIC_ROUTE }, async (_req, reply) => reply.type('text/html; charset=utf-8').send(docsPage));
}
