import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import { listPipelines, readPipeline } from '../../controller/runs/pipeline-view.ts';
import { pipelineOwner } from '../../controller/kinds/pipeline/store.ts';
import { ImportPipeline } from '../../controller/usecases/import-pipeline.ts';
import { principalOf } from '../auth/principal.ts';
import { pipelineSchemas } from '../schemas/pipelines.ts';

/** Pipeline endpoints answer failures as `{success:false, message}` (docs/contract/api.md §4.4), not `error`. */
const messageErrors = { errorField: 'message' as const };

/** Pipeline import (docs/contract/api.md §4.4, its session variant) and the stored pipeline (docs/contract/design.md). */
export default async function pipelineRoutes(app: FastifyInstance): Promise<void> {
  const importer = new ImportPipeline({ runtime: app.runtime });
  const authz = app.runtime.authz;

  async function importPipeline(req: FastifyRequest, reply: FastifyReply) {
    const caller = principalOf(req);
    if ((req.query as { dryRun: boolean }).dryRun) {
      return reply.status(200).send({ success: true, dryRun: true, message: 'Pipeline is valid; nothing was written', data: await importer.plan(req.body, caller) });
    }
    const view = await importer.run(req.body, caller);
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
  }

  app.post('/v1/sdk/import-pipeline', { config: messageErrors, schema: pipelineSchemas.importWithKey }, importPipeline);
  app.post('/v1/sdk/import-pipeline/:userId', { config: messageErrors, schema: pipelineSchemas.importWithSession }, importPipeline);

  async function read(req: FastifyRequest, reply: FastifyReply) {
    const { pipelineId } = req.params as { pipelineId: string };
    // Outside the caller's tenants it answers exactly like an unknown ID.
    const visible = authz.can(principalOf(req), 'read', { kind: 'pipeline', pipelineId });
    const view = visible ? readPipeline(app.runtime.db, pipelineId, app.runtime.clock()) : undefined;
    if (!view) throw new NotFoundError(`Pipeline ${pipelineId} not found`);
    return reply.status(200).send({ success: true, data: { ...view, owner: pipelineOwner(app.runtime.db, pipelineId) ?? null } });
  }
  app.get('/v1/sdk/pipelines/:pipelineId', { config: messageErrors, schema: pipelineSchemas.read }, read);
  app.get('/v1/sdk/pipelines/:pipelineId/:userId', { config: messageErrors, schema: pipelineSchemas.readWithSession }, read);

  // The settings UI's pipelines list: admins every pipeline, a member those of their granted clients.
  app.get('/v1/bi/admin/pipelines/:userId', { schema: pipelineSchemas.list }, async (req) => ({
    success: true,
    pipelines: listPipelines(app.runtime.db, authz.tenants(principalOf(req)), app.runtime.clock()),
  }));
}
