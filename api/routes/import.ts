import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDryRun } from '../query.ts';
import { DashboardImporter, type ImportCaller } from '../../controller/kinds/dashboard/import.ts';
import { requireApiKey, requireSession } from '../auth/guards.ts';
import type { Principal } from '../auth/types.ts';
import { dashboardSchemas } from '../schemas/dashboards.ts';

function callerOf(principal: Principal | undefined): ImportCaller {
  if (!principal) throw new Error('route reached without a principal');
  return { userId: principal.userId, username: principal.username, clientScope: principal.clientScope };
}

/** Spec 4.2 and 4.3: dashboard import, by API key or by browser session. */
export default async function routes(app: FastifyInstance): Promise<void> {
  const importer = new DashboardImporter({ runtime: app.runtime });
  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const caller = callerOf(req.principal);
    if (isDryRun(req)) return reply.status(200).send({ success: true, ...(await importer.plan(req.body, caller)) });
    return reply.status(201).send({ success: true, ...(await importer.import(req.body, caller)) });
  };
  app.post('/v1/sdk/import', { preHandler: requireApiKey(app), schema: dashboardSchemas.importWithKey }, handler);
  app.post('/v1/sdk/import/:userId', { preHandler: requireSession(app), schema: dashboardSchemas.importWithSession }, handler);
}
