import type { FastifyInstance } from 'fastify';
import { readDashboard } from '../../controller/kinds/dashboard/store.ts';
import { NotFoundError } from '../../controller/errors.ts';
import { requireApiKey } from '../auth/guards.ts';

/** The stored dashboard with its normalized charts; the `dashboard` object imports again as is. */
export default async function routes(app: FastifyInstance): Promise<void> {
  app.get<{ Params: { facadeId: string } }>('/v1/sdk/dashboards/:facadeId', { preHandler: requireApiKey(app) }, async (req) => {
    const { facadeId } = req.params;
    const view = readDashboard(app.runtime.db, facadeId);
    const scope = req.principal?.clientScope;
    const allowed =
      view !== undefined &&
      (!scope ||
        (app.runtime.db.prepare('SELECT connection_id FROM clients WHERE client_id = ?').get(scope) as { connection_id: string | null } | undefined)
          ?.connection_id === view.dataSource.dbId);
    if (!view || !allowed) throw new NotFoundError(`Dashboard ${facadeId} not found`);
    return { success: true, dashboard: view };
  });
}
