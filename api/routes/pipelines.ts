import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDryRun } from '../query.ts';
import { resolveSteps } from '../../controller/kinds/pipeline/normalize.ts';
import { nextRunAt } from '../../controller/kinds/pipeline/schedule.ts';
import { readPipeline } from '../../controller/kinds/pipeline/store.ts';
import { validatePipelinePayload } from '../../controller/kinds/pipeline/validate.ts';
import type { Manifest } from '../../controller/types.ts';
import { ManifestNames } from '../../controller/writers/names.ts';
import { slugify } from '../../controller/writers/paths.ts';
import { requireApiKey, requireSession } from '../auth/guards.ts';
import { messageErrorHandler } from '../errors.ts';

const DIR = 'pipelines';
/** Base of the manifest name: the slug of the display name, short enough for a `-<n>` suffix. */
function baseName(displayName: string): string {
  return slugify(displayName, 'pipeline').slice(0, 100);
}

/** Pipeline import (spec 4.4, its session variant) and the stored pipeline (DESIGN.md). */
export default async function pipelineRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;
  const names = new ManifestNames({ kind: 'Pipeline', dir: DIR, locks: rt.locks, status: rt.reconciler.status, writer: rt.writer });

  // Pipeline endpoints answer failures as {success:false, message} (spec 4.4), not `error`.
  app.setErrorHandler(messageErrorHandler);

  async function importPipeline(req: FastifyRequest, reply: FastifyReply) {
    const principal = req.principal;
    if (!principal) return reply.status(401).send({ error: 'API key required' });
    const checked = validatePipelinePayload(app.runtime.schemas, req.body);
    if (!checked.ok) return reply.status(400).send({ success: false, message: checked.message });
    const spec = checked.spec;

    if (isDryRun(req)) {
      const now = app.runtime.clock();
      const next = nextRunAt(spec.schedule, now, now);
      return reply.status(200).send({
        success: true,
        dryRun: true,
        message: 'Pipeline is valid; nothing was written',
        data: {
          pipelineId: null,
          name: spec.name,
          status: 'draft',
          steps: resolveSteps(spec).map((s) => ({ id: null, type: s.type, name: s.name, status: 'configured', config: s.config })),
          nextRunAt: next ? next.toISOString() : null,
        },
      });
    }

    const base = baseName(spec.name);
    const name = await names.reserve(base);
    let freed = false;
    try {
      const relPath = names.relPath(name);
      const write = { actor: { userId: principal.userId, username: principal.username }, message: `import pipeline ${spec.name}` };
      // The manifest keeps the payload as sent: defaults are applied again on every load.
      const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Pipeline', metadata: { name }, spec: req.body as Record<string, unknown> };
      const outcome = await app.runtime.submit(relPath, manifest, write);
      const pipelineId = outcome.resourceIds.pipelineId;
      const view = outcome.phase === 'Synced' && typeof pipelineId === 'string' ? readPipeline(app.runtime.db, pipelineId, app.runtime.clock()) : undefined;
      if (!view) {
        await app.runtime.withdraw(relPath, { ...write, message: `withdraw pipeline ${spec.name}: ${outcome.message}` });
        freed = true;
        return reply.status(outcome.phase === 'Invalid' ? 400 : 422).send({ success: false, message: outcome.message || `pipeline ${spec.name} was not applied` });
      }
      return reply.status(201).send({
        success: true,
        message: 'Pipeline imported successfully',
        data: {
          pipelineId: view.pipelineId,
          name: view.name,
          status: view.status,
          steps: view.steps.map((s) => ({ id: s.id, type: s.type, name: s.name, status: s.status })),
        },
      });
    } finally {
      names.release(base, name, freed);
    }
  }

  app.post('/v1/sdk/import-pipeline', { preHandler: requireApiKey(app) }, importPipeline);
  app.post('/v1/sdk/import-pipeline/:userId', { preHandler: requireSession(app) }, importPipeline);

  app.get('/v1/sdk/pipelines/:pipelineId', { preHandler: requireApiKey(app) }, async (req, reply) => {
    const { pipelineId } = req.params as { pipelineId: string };
    const view = readPipeline(app.runtime.db, pipelineId, app.runtime.clock());
    if (!view) return reply.status(404).send({ success: false, message: `Pipeline ${pipelineId} not found` });
    return reply.status(200).send({ success: true, data: view });
  });
}
