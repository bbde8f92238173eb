import type { FastifyInstance } from 'fastify';
import { Authorizer, dashboardOwner } from '../../controller/authz/index.ts';
import { readDashboard } from '../../controller/kinds/dashboard/store.ts';
import { NotFoundError } from '../../controller/errors.ts';
import { requireApiKey } from '../auth/guards.ts';
import { principalOf } from '../auth/principal.ts';
import { dashboardSchemas } from '../schemas/dashboards.ts';

/** The stored dashboard with its normalized charts; the `dashboard` object imports again as is. */
export default async function routes(app: FastifyInstance): Promise<void> {
  const authz = app.runtime.authz;
  app.get<{ Params: { facadeId: string } }>('/v1/sdk/dashboards/:facadeId', { preHandler: requireApiKey(app), schema: dashboardSchemas.read }, async (req) => {
    const { facadeId } = req.params;
    // Outside the caller's tenants it answers exactly like an unknown ID.
    const visible = authz.can(principalOf(req), 'read', { kind: 'dashboard', facadeId });
    const view = visible ? readDashboard(app.runtime.db, facadeId) : undefined;
    if (!view) throw new NotFoundError(`Dashboard ${facadeId} not found`);
    return { success: true, owner: dashboardOwner(app.runtime.db, facadeId) ?? null, dashboard: view };
  });
}
