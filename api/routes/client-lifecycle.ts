import type { FastifyInstance } from 'fastify';
import { normalizeClientId } from '../../controller/kinds/client/rules.ts';
import { ClientLifecycle } from '../../controller/usecases/client-lifecycle.ts';
import { principalOf } from '../auth/principal.ts';
import { lifecycleSchemas } from '../schemas/client-lifecycle.ts';

/**
 * The lifecycle shortcuts (admin sessions): suspend, resume, restore write the client's manifest
 * through the one write path; purge removes an offboarded client's retained resources.
 */
export default async function clientLifecycleRoutes(app: FastifyInstance): Promise<void> {
  const lifecycle = new ClientLifecycle({ runtime: app.runtime });
  const clientOf = (req: { params: unknown }): string => normalizeClientId((req.params as { clientId: string }).clientId);

  app.post('/v1/bi/admin/clients/:clientId/suspend/:userId', { schema: lifecycleSchemas.suspend }, async (req) => ({
    success: true,
    ...(await lifecycle.suspend(clientOf(req), principalOf(req))),
  }));
  app.post('/v1/bi/admin/clients/:clientId/resume/:userId', { schema: lifecycleSchemas.resume }, async (req) => ({
    success: true,
    ...(await lifecycle.resume(clientOf(req), principalOf(req))),
  }));
  app.post('/v1/bi/admin/clients/:clientId/restore/:userId', { schema: lifecycleSchemas.restore }, async (req) => ({
    success: true,
    ...(await lifecycle.restore(clientOf(req), principalOf(req))),
  }));
  app.post('/v1/bi/admin/clients/:clientId/purge/:userId', { schema: lifecycleSchemas.purge }, async (req) => ({
    success: true,
    ...(await app.runtime.purges.purge(clientOf(req), req.body, principalOf(req))),
  }));
}
