import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { buildOpenApi } from '../openapi/document.ts';

const here = dirname(fileURLToPath(import.meta.url));
const docsPage = readFileSync(join(here, '..', 'openapi', 'docs.html'), 'utf8');
const version = (JSON.parse(readFileSync(join(here, '..', '..', 'package.json'), 'utf8')) as { version: string }).version;

export default async function openapiRoutes(app: FastifyInstance): Promise<void> {
  const doc = buildOpenApi(app.runtime.schemas, version);
  app.get('/openapi.json', async () => doc);
  app.get('/docs', async (_req, reply) => reply.type('text/html; charset=utf-8').send(docsPage));
}
