import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import { exportClient } from '../../controller/kinds/client/export.ts';
import { listClients, readListQuery, type ListQueryString } from '../../controller/kinds/client/listing.ts';
import { detailView, readClient } from '../../controller/kinds/client/registry.ts';
import { normalizeClientId } from '../../controller/kinds/client/rules.ts';
import { clientSchemas } from '../schemas/clients.ts';
import { principalOf } from '../auth/principal.ts';
import { clientResources } from '../../controller/kinds/client/resources.ts';
import { manifestKey } from '../../controller/manifest/loader.ts';
import { statusItem } from './reconciler.ts';
import { clientManifestRow, OffboardClient, planOffboarding } from '../../controller/usecases/offboard-client.ts';

/**
 * The client registry (session): the listing (docs/contract/api.md §4.5), the single read (4.6) and the export
 * of an onboarding package (docs/contract/design.md: endpoints beyond the spec). Admins see every client; a
 * member sees, read-only, the clients granted to them (others answer as unknown).
 */
export default async function clientRoutes(app: FastifyInstance): Promise<void> {
  const authz = app.runtime.authz;
  const visibleClient = (req: Parameters<typeof principalOf>[0], clientId: string): string => {
    if (!authz.can(principalOf(req), 'read', { kind: 'client', clientId })) throw new NotFoundError(`Client ${clientId} not found`);
    return clientId;
  };

  app.get<{ Querystring: ListQueryString }>('/v1/bi/admin/clients/:userId', { schema: clientSchemas.list }, async (req) => {
    const query = readListQuery(req.query);
    const tenants = authz.registryTenants(principalOf(req));
    const page = await listClients(app.runtime.db, query, app.runtime.search, tenants === 'all' ? undefined : tenants);
    return { success: true, data: page.data, pagination: page.pagination };
  });

  // Registered before the single read; find-my-way prefers the static `export` segment anyway.
  app.get('/v1/bi/admin/clients/:clientId/export/:userId', { schema: clientSchemas.export }, async (req) => {
    const { clientId } = req.params as { clientId: string };
    return exportClient(app.runtime.db, visibleClient(req, normalizeClientId(clientId)));
  });

  // The console's client page: its resources by name, the status of its manifests, what offboarding prunes.
  app.get('/v1/bi/admin/clients/:clientId/resources/:userId', { schema: clientSchemas.resources }, async (req) => {
    const clientId = visibleClient(req, normalizeClientId((req.params as { clientId: string }).clientId));
    const rt = app.runtime;
    const row = readClient(rt.db, clientId);
    const own = clientManifestRow(rt, clientId);
    if (!row && !own) throw new NotFoundError(`Client ${clientId} not found`);
    const resources = clientResources(rt.db, clientId);
    const keys = new Set([
      own?.key ?? manifestKey('Client', clientId),
      ...resources.dashboards.map((d) => d.manifestKey),
      ...resources.pipelines.map((p) => p.manifestKey),
      resources.connection?.manifestKey,
    ]);
    const manifests = [...keys]
      .filter((k): k is string => typeof k === 'string')
      .map((k) => rt.reconciler.status.get(k))
      .filter((s) => s !== undefined)
      .map((s) => statusItem(s, rt.reconciler.warnings.get(s.path)));
    return { success: true, clientId, status: row?.status ?? null, ...resources, manifests, offboard: planOffboarding(rt, clientId) ?? null };
  });

  const offboard = new OffboardClient({ runtime: app.runtime });
  app.post('/v1/bi/admin/clients/:clientId/offboard/:userId', { schema: clientSchemas.offboard }, async (req) => {
    const clientId = normalizeClientId((req.params as { clientId: string }).clientId);
    const body = (req.body ?? {}) as { confirm?: unknown };
    const done = await offboard.run(clientId, typeof body === 'object' && body !== null ? body.confirm : undefined, principalOf(req));
    return { success: true, clientId, status: readClient(app.runtime.db, clientId)?.status ?? null, manifest: done.manifest, removed: done.plan };
  });

  app.get('/v1/bi/admin/clients/:clientId/:userId', { schema: clientSchemas.read }, async (req) => {
    const clientId = visibleClient(req, normalizeClientId((req.params as { clientId: string }).clientId));
    const row = readClient(app.runtime.db, clientId);
    if (!row) throw new NotFoundError(`Client ${clientId} not found`);
    return { success: true, client: detailView(row) };
  });
}
