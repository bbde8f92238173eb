import type { FastifyInstance } from 'fastify';
import { ConflictError, ValidationError } from '../../controller/errors.ts';
import { ObjectHistory, type RollbackRequest } from '../../controller/usecases/objects.ts';
import { principalOf } from '../auth/principal.ts';
import { objectSchemas } from '../schemas/objects.ts';

type Params = { kind: string; name: string };

/** The body of a rollback: `{revision}` or `{version}`, nothing else. */
function rollbackBody(body: unknown): RollbackRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError([{ path: '', message: 'Request body must be a JSON object' }]);
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (k !== 'revision' && k !== 'version') throw new ValidationError([{ path: k, message: 'is not a field of a rollback (revision or version)' }]);
  if (b.revision !== undefined && typeof b.revision !== 'string') throw new ValidationError([{ path: 'revision', message: 'must be a string' }]);
  if (b.version !== undefined && (typeof b.version !== 'number' || !Number.isInteger(b.version) || b.version < 1)) {
    throw new ValidationError([{ path: 'version', message: 'must be an integer ≥ 1' }]);
  }
  if (b.revision !== undefined && b.version !== undefined) throw new ValidationError([{ path: 'version', message: 'give revision or version, not both' }]);
  return { ...(b.revision !== undefined ? { revision: b.revision as string } : {}), ...(b.version !== undefined ? { version: b.version as number } : {}) };
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

  app.post<{ Params: Params }>('/v1/reconciler/objects/:kind/:name/rollback', { schema: objectSchemas.rollback }, async (req) => {
    const { result, to } = await objects.rollback(req.params.kind, req.params.name, rollbackBody(req.body), principalOf(req));
    if (result.phase !== 'Synced') throw new ConflictError(`rolling ${result.key} back to ${to} did not apply (${result.phase}): ${result.message}`);
    return { success: true, key: result.key, to, phase: result.phase };
  });

  app.post('/v1/reconciler/rollback', { schema: objectSchemas.revert }, async (req) => {
    const body = req.body;
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError([{ path: '', message: 'Request body must be a JSON object' }]);
    const { revision, message } = body as Record<string, unknown>;
    if (typeof revision !== 'string' || !/^[0-9a-fA-F]{7,40}$/.test(revision)) throw new ValidationError([{ path: 'revision', message: 'must be a commit SHA (7 to 40 hex digits)' }]);
    if (message !== undefined && (typeof message !== 'string' || message.length > 500)) throw new ValidationError([{ path: 'message', message: 'must be a text of at most 500 characters' }]);
    const r = await objects.revertCommit(revision, principalOf(req), message as string | undefined);
    return { success: true, revision, revert: r.revert, branch: r.branch, applied: r.report.applied, failed: r.report.failed, pruned: r.report.pruned };
  });
}
