import type { FastifyInstance } from 'fastify';
import { readClient } from '../../controller/kinds/client/registry.ts';
import { readDashboard } from '../../controller/kinds/dashboard/store.ts';
import { NotFoundError } from '../../controller/errors.ts';
import { requireApiKey } from '../auth/guards.ts';
import { principalOf } from '../auth/principal.ts';

/** The stored dashboard with its normalized charts; the `dashboard` object imports again as is. */
export default async function routes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { facadeId: string } }>('/v1/sdk/dashboards/:facadeId', { preHandler: requireApiKey(app) }, async (req) => {
    const { facadeId } = req.params;
    const view = readDashboard(app.runtime.db, facadeId);
    const scope = principalOf(req).clientScope;
    const allowed =
      view !== undefined &&
      (!scope || readClient(app.runtime.db, scope)?.connection_id === view.dataSource.dbId);
    if (!view || !allowed) throw new NotFoundError(`Dashboard ${facadeId} not found`);
    return { success: true, dashboard: view };
  });
}
