import type { FastifyInstance } from 'fastify';
import { readConnectionSummary } from '../../controller/kinds/connection/registry.ts';
import { ConnectionInUseError, EditConnection } from '../../controller/usecases/edit-connection.ts';
import { principalOf } from '../auth/principal.ts';
import { connectionEditSchemas } from '../schemas/connections.ts';
import { readConnectionBody, type ConnectionBody } from './settings.ts';

type Params = { connectionId: string };

/**
 * The console's edit and delete of a connection (S, admin): a connection is a manifest, so both
 * go through the one write path (EditConnection); a delete is refused while anything uses it.
 */
export default async function connectionEditRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;
  const edits = new EditConnection({ runtime: rt });

  // The body is checked at the edge (schemas/api.schema.json `ConnectionRequest`).
  app.patch<{ Params: Params; Body: ConnectionBody }>('/v1/bi/admin/connections/:connectionId/:userId', { schema: connectionEditSchemas.update }, async (req) => {
    const { connectionId } = req.params;
    // Fields left out keep their value: the body goes over the connection's current spec.
    const input = readConnectionBody({ ...(edits.currentSpec(connectionId) as ConnectionBody), ...req.body }, { requireName: true });
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
