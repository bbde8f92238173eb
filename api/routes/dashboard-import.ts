import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ImportDashboard } from '../../controller/usecases/import-dashboard.ts';
import { principalOf } from '../auth/principal.ts';
import { dashboardSchemas } from '../schemas/dashboards.ts';

/** docs/contract/api.md §4.2 and §4.3: dashboard import, by API key or by browser session. */
export default async function dashboardImportRoutes(app: FastifyInstance): Promise<void> {
  const importer = new ImportDashboard({ runtime: app.runtime });
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const caller = principalOf(req);
    if ((req.query as { dryRun: boolean }).dryRun) return reply.status(200).send({ success: true, ...(await importer.plan(req.body, caller)) });
    return reply.status(201).send({ success: true, ...(await importer.run(req.body, caller)) });
  };
  app.post('/v1/sdk/import', { schema: dashboardSchemas.importWithKey }, handler);
  app.post('/v1/sdk/import/:userId', { schema: dashboardSchemas.importWithSession }, handler);
}
