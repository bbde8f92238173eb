import type { FastifyInstance } from 'fastify';
import { dashboardOwner } from '../../controller/kinds/dashboard/store.ts';
import { readDashboard } from '../../controller/kinds/dashboard/store.ts';
import { NotFoundError } from '../../controller/errors.ts';
import { listDashboards } from '../../controller/kinds/client/resources.ts';
import { normalizeClientId } from '../../controller/kinds/client/rules.ts';
import type { FastifyRequest } from 'fastify';
import { principalOf } from '../auth/principal.ts';
import { dashboardSchemas } from '../schemas/dashboards.ts';

/** The stored dashboard with its normalized charts; the `dashboard` object imports again as is. */
export default async function routes(app: FastifyInstance): Promise<void> {
  const authz = app.runtime.authz;
  const read = (req: FastifyRequest<{ Params: { facadeId: string } }>) => {
    const { facadeId } = req.params;
    // Outside the caller's tenants it answers exactly like an unknown ID.
    const visible = authz.can(principalOf(req), 'read', { kind: 'dashboard', facadeId });
    const view = visible ? readDashboard(app.runtime.db, facadeId) : undefined;
    if (!view) throw new NotFoundError(`Dashboard ${facadeId} not found`);
    return { success: true, owner: dashboardOwner(app.runtime.db, facadeId) ?? null, dashboard: view };
  };
  app.get<{ Params: { facadeId: string } }>('/v1/sdk/dashboards/:facadeId', { schema: dashboardSchemas.read }, async (req) => read(req));
  app.get<{ Params: { facadeId: string } }>('/v1/sdk/dashboards/:facadeId/:userId', { schema: dashboardSchemas.readWithSession }, async (req) => read(req));

  // The console's dashboards page: every dashboard the caller may see.
  app.get<{ Querystring: { clientId?: string } }>('/v1/bi/admin/dashboards/:userId', { schema: dashboardSchemas.list }, async (req) => {
    const clientId = typeof req.query.clientId === 'string' && req.query.clientId !== '' ? normalizeClientId(req.query.clientId) : undefined;
    return { success: true, dashboards: listDashboards(app.runtime.db, authz.tenants(principalOf(req)), clientId) };
  });
}
