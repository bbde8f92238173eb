import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDryRun } from '../query.ts';
import { clientApplier } from '../../controller/kinds/client/applier.ts';
import { planOnboarding } from '../../controller/kinds/client/plan.ts';
import { onboardView, readClient, type OnboardedClient } from '../../controller/kinds/client/registry.ts';
import { parseOnboardingPackage } from '../../controller/kinds/client/rules.ts';
import type { ClientSpec } from '../../controller/kinds/client/types.ts';
import type { Manifest, WriteOptions } from '../../controller/types.ts';
import { requireApiKey, requireSession } from '../auth/guards.ts';
import { assertTenant } from '../auth/tenant.ts';
import type { Principal } from '../auth/types.ts';
import { clientSchemas } from '../schemas/clients.ts';

/** Where the API records a client's desired state: one manifest per client, named by its ID. */
export const clientManifestPath = (clientId: string): string => `clients/${clientId}.yaml`;

/**
 * `POST /v1/sdk/client/onboard` (API key) and `POST /v1/sdk/client/onboard/{userId}` (admin
 * session): validate, then under the client's lock answer ALREADY_EXISTS for an ACTIVE client,
 * or write `clients/<ID>.yaml` and reconcile it now: 201 COMPLETED, or 422 FAILED with the
 * manifest withdrawn again (all or nothing for an API caller). `?dryRun=true` plans only.
 */
export default async function onboardRoutes(app: FastifyInstance): Promise<void> {
  app.post('/v1/sdk/client/onboard', { preHandler: requireApiKey(app), schema: clientSchemas.onboardWithKey }, (req, reply) => onboard(app, req, reply));
  app.post('/v1/sdk/client/onboard/:userId', { preHandler: requireSession(app, { role: 'admin' }), schema: clientSchemas.onboardWithSession }, (req, reply) => onboard(app, req, reply));
}

async function onboard(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const rt = app.runtime;
  const principal = req.principal as Principal;
  const { raw, spec } = parseOnboardingPackage(rt.schemas, req.body);
  const clientId = spec.clientId;
  assertTenant(principal, clientId);
  const relPath = clientManifestPath(clientId);
  const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Client', metadata: { name: clientId }, spec: raw };
  const writeOpts = (message: string): WriteOptions => ({ actor: { userId: principal.userId, username: principal.username }, message });

  await rt.locks.run(`Client/${clientId}`, async () => {
    const existing = readClient(rt.db, clientId);
    if (existing?.status === 'ACTIVE') {
      return reply.status(200).send({ success: true, status: 'ALREADY_EXISTS', client: onboardView(existing) });
    }
    if (isDryRun(req)) {
      const result = planOnboarding({
        db: rt.db,
        applier: clientApplier,
        manifest: { ...manifest, spec } as Manifest<ClientSpec>,
        actor: principal.userId,
        now: rt.clock(),
      });
      if (!result.ok) return reply.status(422).send({ success: false, dryRun: true, status: 'FAILED', error: result.error });
      return reply.status(200).send({ success: true, dryRun: true, status: 'DRY_RUN', plan: result.plan });
    }
    const outcome = await rt.submit(relPath, manifest, writeOpts(`onboard client ${clientId}`));
    if (outcome.phase === 'Synced') {
      const row = readClient(rt.db, clientId);
      if (row?.status === 'ACTIVE') return reply.status(201).send({ success: true, status: 'COMPLETED', client: onboardView(row) });
    }
    await rt.withdraw(relPath, writeOpts(`withdraw failed onboarding of client ${clientId}`));
    if (outcome.phase === 'Invalid') return reply.status(400).send({ success: false, error: `Validation failed: ${outcome.message}` });
    const row = readClient(rt.db, clientId);
    const client: OnboardedClient =
      row && row.status === 'FAILED' ? onboardView(row) : failedView(spec, principal.userId, rt.clock().toISOString());
    return reply.status(422).send({ success: false, status: 'FAILED', error: outcome.message, client });
  });
}

/** The FAILED client of a 422 when no audit row could be read back. */
function failedView(spec: ClientSpec, userId: string, at: string): OnboardedClient {
  return {
    clientId: spec.clientId,
    clientName: spec.clientName,
    connectionId: spec.connectionId,
    modelId: null,
    vdmIds: [],
    facadeIds: [],
    experimentIds: [],
    coreModelId: spec.coreModelId,
    status: 'FAILED',
    onboardedBy: userId,
    onboardedDate: at,
  };
}
