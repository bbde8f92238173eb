import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import { exportClient } from '../../controller/kinds/client/export.ts';
import { listClients, parseListQuery } from '../../controller/kinds/client/listing.ts';
import { detailView, readClient } from '../../controller/kinds/client/registry.ts';
import { normalizeClientId } from '../../controller/kinds/client/rules.ts';
import { requireSession } from '../auth/guards.ts';
import { clientSchemas } from '../schemas/clients.ts';
import { principalOf } from '../auth/principal.ts';

/**
 * The client registry (session): the listing (spec 4.5), the single read (4.6) and the export
 * of an onboarding package (DESIGN: endpoints beyond the spec). Admins see every client; a
 * member sees, read-only, the clients granted to them (others answer as unknown).
 */
export default async function clientRoutes(app: FastifyInstance): Promise<void> {
  const session = { preHandler: requireSession(app) };
  const authz = app.runtime.authz;
  const visibleClient = (req: Parameters<typeof principalOf>[0], clientId: string): string => {
    if (!authz.can(principalOf(req), 'read', { kind: 'client', clientId })) throw new NotFoundError(`Client ${clientId} not found`);
    return clientId;
  };

  app.get('/v1/bi/admin/clients/:userId', { ...session, schema: clientSchemas.list }, async (req) => {
    const query = parseListQuery((req.query ?? {}) as Record<string, unknown>);
    const tenants = authz.tenants(principalOf(req));
    const page = await listClients(app.runtime.db, query, app.runtime.search, tenants === 'all' ? undefined : tenants);
    return { success: true, data: page.data, pagination: page.pagination };
  });

  // Registered before the single read; find-my-way prefers the static `export` segment anyway.
  app.get('/v1/bi/admin/clients/:clientId/export/:userId', { ...session, schema: clientSchemas.export }, async (req) => {
    const { clientId } = req.params as { clientId: string };
    return exportClient(app.runtime.db, visibleClient(req, normalizeClientId(clientId)));
  });

  app.get('/v1/bi/admin/clients/:clientId/:userId', { ...session, schema: clientSchemas.read }, async (req) => {
    const clientId = visibleClient(req, normalizeClientId((req.params as { clientId: string }).clientId));
    const row = readClient(app.runtime.db, clientId);
    if (!row) throw new NotFoundError(`Client ${clientId} not found`);
    return { success: true, client: detailView(row) };
  });
}
