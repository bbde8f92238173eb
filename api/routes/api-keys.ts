import type { FastifyInstance } from 'fastify';
import { parseIsoDate } from '../../controller/dates.ts';
import { ForbiddenError, NotFoundError, ValidationError } from '../../controller/errors.ts';
import { readClient } from '../../controller/kinds/client/registry.ts';
import { normalizeClientId } from '../../controller/kinds/client/rules.ts';
import { ADMIN_REQUIRED } from '../../controller/authz/index.ts';
import { principalOf } from '../auth/principal.ts';
import { apiKeySchemas } from '../schemas/auth.ts';


/** The body of docs/contract/api.md §4.7 as the edge checked it (schemas/api.schema.json `ApiKeyRequest`). */
interface CreateKeyRequest {
  label: string;
  targetUserId?: string | null;
  expiresAt?: string | null;
  clientId?: string | null;
}

interface CreateKeyBody {
  label: string;
  targetUserId?: string;
  expiresAt?: string;
  clientId?: string;
}

/**
 * What the schema cannot say about a checked body: the label trimmed, the client ID trimmed and
 * uppercased, `null` or `""` as a field left out, and the expiry in the future (400 otherwise).
 */
export function readCreateKey(b: CreateKeyRequest, now: Date): CreateKeyBody {
  const at = b.expiresAt ? parseIsoDate(b.expiresAt) : undefined;
  if (at && at.getTime() <= now.getTime()) throw new ValidationError([{ path: 'expiresAt', message: 'must be in the future' }]);
  return {
    label: b.label.trim(),
    ...(b.targetUserId ? { targetUserId: b.targetUserId } : {}),
    ...(at ? { expiresAt: at.toISOString() } : {}),
    ...(b.clientId ? { clientId: normalizeClientId(b.clientId.trim()) } : {}),
  };
}

export const MEMBER_KEY_NEEDS_CLIENT = 'A member\'s API key must name one of their granted clients (clientId)';
export const clientNotGranted = (clientId: string): string => `Client ${clientId} is not granted to this user`;
/** An admin's key scoped to a client the registry does not hold. */
export const clientNotFound = (clientId: string): string => `must name a client in the registry (Client ${clientId} not found)`;

/** API-key management (docs/contract/api.md §4.7, 4.8, and the listing of docs/contract/design.md); every route is S with CTN. */
export default async function apiKeyRoutes(app: FastifyInstance): Promise<void> {
  const authz = app.runtime.authz;

  app.post<{ Params: { userId: string }; Body: CreateKeyRequest }>('/v1/api-keys/:userId', { config: { noStore: true }, schema: apiKeySchemas.create }, async (req, reply) => {
    const me = principalOf(req);
    const auth = app.runtime.auth;
    const body = readCreateKey(req.body, app.runtime.clock());
    const target = body.targetUserId ?? me.userId;
    if (!authz.can(me, 'admin', { kind: 'user', userId: target })) throw new ForbiddenError(ADMIN_REQUIRED);
    const rights = auth.rights.of(target);
    if (!rights) throw new NotFoundError(`User ${target} not found`);
    // A member's key names one of their granted clients (a key never does more than its user).
    if (rights.role === 'member' && !body.clientId) throw new ForbiddenError(MEMBER_KEY_NEEDS_CLIENT);
    if (rights.role === 'member' && body.clientId && !rights.clients.includes(body.clientId)) throw new ForbiddenError(clientNotGranted(body.clientId));
    // An admin's key scoped to a client the registry never held would never be of use: a typo. (A
    // member's key may name a granted client not onboarded yet: the grant says it is meant, and the
    // key is how the member onboards it, docs/contract/design.md.)
    if (rights.role === 'admin' && body.clientId && !readClient(app.runtime.db, body.clientId)) {
      throw new ValidationError([{ path: 'clientId', message: clientNotFound(body.clientId) }]);
    }
    const key = auth.createKey({ userId: target, label: body.label, clientId: body.clientId, expiresAt: body.expiresAt, createdBy: me.userId });
    req.log.info({ keyId: key.keyId, userId: target, by: me.userId }, 'api key created');
    return reply.status(201).header('cache-control', 'no-store').send({ success: true, keyId: key.keyId, keyPrefix: key.keyPrefix, label: key.label, apiKey: key.apiKey });
  });

  app.delete<{ Params: { userId: string; keyId: string } }>('/v1/api-keys/:userId/:keyId', { schema: apiKeySchemas.revoke }, async (req) => {
    const me = principalOf(req);
    const auth = app.runtime.auth;
    const key = auth.keys.get(req.params.keyId);
    if (!key || !authz.can(me, 'admin', { kind: 'user', userId: key.userId })) throw new NotFoundError(`API key ${req.params.keyId} not found`);
    auth.revokeKey(key.keyId, me.userId);
    req.log.info({ keyId: key.keyId, by: me.userId }, 'api key revoked');
    return { success: true, keyId: key.keyId, revoked: true };
  });

  app.get<{ Params: { userId: string } }>('/v1/api-keys/:userId', { schema: apiKeySchemas.list }, async (req) => {
    const me = principalOf(req);
    return { success: true, keys: app.runtime.auth.listKeys(me.userId) };
  });

  // Every user's keys with their user: the admin's People page, to find and revoke any key.
  app.get('/v1/bi/admin/api-keys/:userId', { schema: apiKeySchemas.listAll }, async () => ({
    success: true,
    keys: app.runtime.auth.listAllKeys(),
  }));
}
