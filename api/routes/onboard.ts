import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OnboardClient } from '../../controller/usecases/onboard-client.ts';
import { principalOf } from '../auth/principal.ts';
import { clientSchemas } from '../schemas/clients.ts';

/**
 * `POST /v1/sdk/client/onboard` (API key) and `POST /v1/sdk/client/onboard/{userId}` (admin
 * session): 201 COMPLETED, 200 ALREADY_EXISTS, 200 DRY_RUN with `?dryRun=true`; failures are
 * errors of the use case, mapped in api/errors.ts (400, 403, 422 FAILED with the client).
 */
export default async function onboardRoutes(app: FastifyInstance): Promise<void> {
  const onboarding = new OnboardClient({ runtime: app.runtime });
  const onboard = async (req: FastifyRequest, reply: FastifyReply) => {
    const { dryRun } = req.query as { dryRun: boolean };
    const outcome = await onboarding.run(req.body, principalOf(req), { dryRun });
    if (outcome.status === 'DRY_RUN') return reply.status(200).send({ success: true, dryRun: true, status: 'DRY_RUN', plan: outcome.plan });
    return reply.status(outcome.status === 'COMPLETED' ? 201 : 200).send({ success: true, status: outcome.status, client: outcome.client });
  };
  app.post('/v1/sdk/client/onboard', { schema: clientSchemas.onboardWithKey }, onboard);
  app.post('/v1/sdk/client/onboard/:userId', { schema: clientSchemas.onboardWithSession }, onboard);
}
