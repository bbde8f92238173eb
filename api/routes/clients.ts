import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import { exportClient } from '../../controller/kinds/client/export.ts';
import { listClients, parseListQuery } from '../../controller/kinds/client/listing.ts';
import { detailView, readClient } from '../../controller/kinds/client/registry.ts';
import { normalizeClientId } from '../../controller/kinds/client/rules.ts';
import { RegistrySearch } from '../../controller/kinds/client/search.ts';
import { requireSession } from '../auth/guards.ts';

/**
 * The client registry for admins (session): the listing (spec 4.5), the single read (4.6) and
 * the export of an onboarding package (DESIGN: endpoints beyond the spec).
 */
export default async function clientRoutes(app: FastifyInstance): Promise<void> {
  const admin = { preHandler: requireSession(app, { role: 'admin' }) };
  // One search (its worker threads and corpus) per app; the runtime is to own it (see search.ts).
  const search = new RegistrySearch({ db: app.runtime.db });
  app.addHook('onClose', () => search.close());

  app.get('/v1/bi/admin/clients/:userId', admin, async (req) => {
    const query = parseListQuery((req.query ?? {}) as Record<string, unknown>);
    const page = await listClients(app.runtime.db, query, search);
    return { success: true, data: page.data, pagination: page.pagination };
  });

  // Registered before the single read; find-my-way prefers the static `export` segment anyway.
  app.get('/v1/bi/admin/clients/:clientId/export/:userId', admin, async (req) => {
    const { clientId } = req.params as { clientId: string };
    return exportClient(app.runtime.db, normalizeClientId(clientId));
  });

  app.get('/v1/bi/admin/clients/:clientId/:userId', admin, async (req) => {
    const clientId = normalizeClientId((req.params as { clientId: string }).clientId);
    const row = readClient(app.runtime.db, clientId);
    if (!row) throw new NotFoundError(`Client ${clientId} not found`);
    return { success: true, client: detailView(row) };
  });
}
