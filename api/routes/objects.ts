import type { FastifyInstance } from 'fastify';
import { ConflictError, ValidationError } from '../../controller/errors.ts';
import { ObjectHistory, type RollbackRequest } from '../../controller/usecases/objects.ts';
import { principalOf } from '../auth/principal.ts';
import { objectSchemas } from '../schemas/objects.ts';

type Params = { kind: string; name: string };

/** What the schema (`RollbackRequest`) cannot say: revision or version, not both. */
function rollbackBody(b: RollbackRequest): RollbackRequest {
  if (b.revision !== undefined && b.version !== undefined) throw new ValidationError([{ path: 'version', message: 'give revision or version, not both' }]);
  return b;
}

/**
 * Objects (admin): one manifest seen from both sides — desired and applied, with the field
 * diff — its history and rollback (docs/api.md, "Objects").
 */
export default async function objectRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;
  const objects = new ObjectHistory({ runtime: rt });

  app.get<{ Params: Params }>('/v1/reconciler/objects/:kind/:name', { schema: objectSchemas.read }, async (req) => ({
    success: true,
    object: objects.read(req.params.kind, req.params.name),
  }));

  app.get<{ Params: Params }>('/v1/reconciler/objects/:kind/:name/history', { schema: objectSchemas.history }, async (req) => ({
    success: true,
    history: await objects.history(req.params.kind, req.params.name),
  }));

  app.post<{ Params: Params; Body: RollbackRequest }>('/v1/reconciler/objects/:kind/:name/rollback', { schema: objectSchemas.rollback }, async (req) => {
    const { result, to } = await objects.rollback(req.params.kind, req.params.name, rollbackBody(req.body), principalOf(req));
    if (result.phase !== 'Synced') throw new ConflictError(`rolling ${result.key} back to ${to} did not apply (${result.phase}): ${result.message}`);
    return { success: true, key: result.key, to, phase: result.phase };
  });

  // The body is checked at the edge (schemas/api.schema.json `RevertRequest`).
  app.post<{ Body: { revision: string; message?: string } }>('/v1/reconciler/rollback', { schema: objectSchemas.revert }, async (req) => {
    const { revision, message } = req.body;
    const r = await objects.revertCommit(revision, principalOf(req), message);
    return { success: true, revision, revert: r.revert, branch: r.branch, applied: r.report.applied, failed: r.report.failed, pruned: r.report.pruned };
  });
}
