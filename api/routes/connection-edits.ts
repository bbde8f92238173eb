import type { FastifyInstance } from 'fastify';
import { readConnectionSummary } from '../../controller/kinds/connection/registry.ts';
import { ValidationError } from '../../controller/errors.ts';
import { ConnectionInUseError, EditConnection } from '../../controller/usecases/edit-connection.ts';
import { principalOf } from '../auth/principal.ts';
import { connectionEditSchemas } from '../schemas/connections.ts';
import { readConnectionBody } from './settings.ts';

type Params = { connectionId: string };

/**
 * The console's edit and delete of a connection (S, admin): a connection is a manifest, so both
 * go through the one write path (EditConnection); a delete is refused while anything uses it.
 */
export default async function connectionEditRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;
  const edits = new EditConnection({ runtime: rt });

  app.patch<{ Params: Params }>('/v1/bi/admin/connections/:connectionId/:userId', { schema: connectionEditSchemas.update }, async (req) => {
    const { connectionId } = req.params;
    if (!req.body || typeof req.body !== 'object' || Array.isArray(req.body)) throw new ValidationError([{ path: '', message: 'Request body must be a JSON object' }]);
    // Fields left out keep their value: the body goes over the connection's current spec.
    const input = readConnectionBody({ ...edits.currentSpec(connectionId), ...(req.body as object) }, { requireName: true });
    await edits.update(connectionId, input, principalOf(req));
    return { success: true, connection: readConnectionSummary(rt.db, connectionId) };
  });

  app.delete<{ Params: Params }>('/v1/bi/admin/connections/:connectionId/:userId', { schema: connectionEditSchemas.remove }, async (req, reply) => {
    const { connectionId } = req.params;
    try {
      await edits.remove(connectionId, principalOf(req));
    } catch (err) {
      if (err instanceof ConnectionInUseError) return reply.status(409).send({ success: false, error: err.message, usedBy: err.usedBy });
      throw err;
    }
    return { success: true, connectionId, deleted: true };
  });
}
