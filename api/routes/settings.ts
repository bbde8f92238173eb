import type { FastifyInstance } from 'fastify';
import { readClient } from '../../controller/kinds/client/registry.ts';
import { listCoreModels } from '../../controller/kinds/coremodel/store.ts';
import { DEFAULT_TEST_TIMEOUT_MS, testConnection, type ConnectionTarget } from '../../controller/connections/test-connection.ts';
import { NotFoundError, ValidationError } from '../../controller/errors.ts';
import type { ConnectionSpec } from '../../controller/kinds/connection/applier.ts';
import { secretTarget } from '../../controller/secrets/target.ts';
import type { Problem } from '../../controller/types.ts';
import { SaveConnection, validationFailed, type ConnectionInput } from '../../controller/usecases/save-connection.ts';
import { principalOf } from '../auth/principal.ts';
import { settingsSchemas } from '../schemas/settings.ts';

/** The settings UI's own endpoints (S, admin unless noted); everything else it calls is the public API. */

const TEXT_FIELDS = ['name', 'description', 'accountUrl', 'host', 'warehouse', 'database', 'schema', 'username'] as const;

export interface SettingsOptions {
  /** Upper bound for Test Connection (ms). */
  testTimeoutMs?: number;
}

/** The wizard's data source as the edge checked it (schemas/api.schema.json `ConnectionRequest`). */
export type ConnectionBody = Partial<Record<(typeof TEXT_FIELDS)[number] | 'password' | 'secretRef', string | null>> & {
  vendor?: ConnectionSpec['vendor'] | null;
  port?: number | string | null;
  connectionId?: string;
  owner?: string;
};

const PORT_PROBLEM = { path: 'port', message: 'port must be an integer from 1 to 65535' };

/**
 * A checked connection body as the wizard means it (the password kept apart from the spec):
 * `null` or `""` is a field left out, text trimmed, the owner uppercased, a port typed as text
 * read as a number; and what the schema cannot say — a name (`requireName`), and the vendor's
 * own address field — each named (400 `Validation failed: …`).
 */
export function readConnectionBody(b: ConnectionBody, opts: { requireName: boolean }): ConnectionInput {
  const problems: Problem[] = [];
  const spec: Partial<ConnectionSpec> = { vendor: b.vendor ?? 'SNOWFLAKE' };
  for (const f of TEXT_FIELDS) {
    const v = b[f];
    if (v) spec[f] = v.trim();
  }
  if (b.port !== undefined && b.port !== null && b.port !== '') {
    const port = Number(b.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) problems.push(PORT_PROBLEM);
    else spec.port = port;
  }
  if (b.connectionId) spec.connectionId = b.connectionId;
  if (b.owner) spec.owner = b.owner.toUpperCase();
  if (opts.requireName && !spec.name) problems.push({ path: 'name', message: 'name is required' });
  if (spec.vendor === 'POSTGRESQL' && !spec.host && !spec.accountUrl) problems.push({ path: 'host', message: 'host (or accountUrl) is required for POSTGRESQL' });
  if (spec.vendor === 'SNOWFLAKE' && !spec.accountUrl) problems.push({ path: 'accountUrl', message: 'accountUrl is required for SNOWFLAKE' });
  if (problems.length) throw validationFailed(problems);
  return { spec, password: b.password || undefined, secretRef: b.secretRef || undefined };
}



export default async function settings(app: FastifyInstance, opts: SettingsOptions = {}): Promise<void> {
  const rt = app.runtime;
  const secrets = rt.secrets;
  const saveConnection = new SaveConnection({ runtime: rt, secrets });
  const authz = rt.authz;

  // Any signed-in user: who am I and may I see settings (the UI hides them from members).
  app.get('/v1/settings/session/:userId', { schema: settingsSchemas.session }, async (req) => {
    const p = principalOf(req);
    const isAdmin = authz.can(p, 'admin', { kind: 'platform' });
    return {
      success: true,
      userId: p.userId,
      username: p.username,
      role: p.role,
      settings: isAdmin,
      ...(isAdmin ? { secrets: { available: secrets.available, ...(secrets.problem ? { problem: secrets.problem } : {}) } } : {}),
      // A member's key form offers exactly these (the server refuses any other clientId).
      ...(p.role === 'member' ? { clients: Array.isArray(p.tenants) ? [...p.tenants] : [] } : {}),
    };
  });

  app.get('/v1/bi/admin/core-models/:userId', { schema: settingsSchemas.coreModels }, async () => {
    return { success: true, coreModels: listCoreModels(rt.db) };
  });

  app.post<{ Body: ConnectionBody }>('/v1/bi/admin/test-connection/:userId', { schema: settingsSchemas.testConnection }, async (req) => {
    const { spec, password, secretRef } = readConnectionBody(req.body, { requireName: false });
    // A stored password only ever goes to the target it was stored for: nothing is sent otherwise.
    const refused = !password && secretRef ? secrets.refusal(secretRef, secretTarget({ ...spec, vendor: spec.vendor ?? 'SNOWFLAKE' })) : undefined;
    if (refused) throw new ValidationError([{ path: 'secretRef', message: refused }], refused);
    const typed = password ?? (secretRef ? secrets.reveal(secretRef) : undefined);
    const target: ConnectionTarget = { ...spec, vendor: spec.vendor ?? 'SNOWFLAKE', password: typed };
    const result = await testConnection(target, { timeoutMs: opts.testTimeoutMs ?? DEFAULT_TEST_TIMEOUT_MS });
    return { success: true, connected: result.ok, vendor: result.vendor, message: result.message, durationMs: result.durationMs, ...(result.serverVersion ? { serverVersion: result.serverVersion } : {}) };
  });

  // The wizard's data source: a Connection manifest through the one submit path (SaveConnection).
  app.post<{ Body: ConnectionBody }>('/v1/bi/admin/connections/:userId', { schema: settingsSchemas.connections }, async (req, reply) => {
    const saved = await saveConnection.run(readConnectionBody(req.body, { requireName: true }), principalOf(req));
    const { created, ...body } = saved;
    return reply.status(created ? 201 : 200).send({ success: true, ...body });
  });

  // A client's onboarding audit and its manifest's reconcile status (the client detail page).
  app.get('/v1/bi/admin/clients/:clientId/audit/:userId', { schema: settingsSchemas.audit }, async (req) => {
    const clientId = String((req.params as { clientId: string }).clientId).toUpperCase();
    const row = readClient(rt.db, clientId);
    const status = rt.reconciler.status.get(row?.manifest_key ?? `Client/${clientId}`);
    if (!row && !status) throw new NotFoundError(`Client ${clientId} not found`);
    return {
      success: true,
      clientId,
      audit: row
        ? {
            status: row.status,
            clientName: row.client_name,
            onboardedBy: row.onboarded_by,
            onboardedDate: row.onboarded_date,
            lastModifiedDate: row.last_modified_date,
            isActive: row.is_active === 1,
            isDeleted: row.is_deleted === 1,
            failedStep: row.failed_step,
            failureReason: row.failure_reason,
          }
        : null,
      manifest: status
        ? {
            key: status.key,
            path: status.path,
            phase: status.phase,
            message: status.message,
            attempts: status.attempts,
            nextRetryAt: status.nextRetryAt,
            lastTransitionAt: status.lastTransitionAt,
            lastAppliedRevision: status.lastAppliedRevision,
            actor: status.actor,
            resourceIds: status.resourceIds,
          }
        : null,
    };
  });
}
