import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { iterateAudit, readAudit, type AuditQuery } from '../../controller/audit/log.ts';
import { ValidationError } from '../../controller/errors.ts';
import type { Problem } from '../../controller/types.ts';
import { principalOf } from '../auth/principal.ts';
import { auditSchemas } from '../schemas/audit.ts';

/** The audit query as the edge checked it (api/schemas/audit.ts): defaults in, every value typed. */
interface AuditQueryString {
  clientId?: string;
  actor?: string;
  action?: string;
  since?: string;
  until?: string;
  cursor?: number;
  limit: number;
  order: 'asc' | 'desc';
  format: 'json' | 'ndjson';
}

/**
 * What the schema cannot say: the client ID uppercased and trimmed, and `since` / `until` read as
 * any date `Date` reads (400 naming each one it cannot).
 */
export function readAuditQuery(q: AuditQueryString): Omit<AuditQuery, 'clients'> & { format: 'json' | 'ndjson' } {
  const problems: Problem[] = [];
  const date = (field: 'since' | 'until'): string | undefined => {
    const v = q[field];
    if (v === undefined) return undefined;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) problems.push({ path: field, message: `${field} must be an ISO 8601 date-time` });
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  };
  const since = date('since');
  const until = date('until');
  if (problems.length) throw new ValidationError(problems);
  const clientId = q.clientId?.trim().toUpperCase();
  return {
    ...(clientId ? { clientId } : {}),
    ...(q.actor ? { actor: q.actor } : {}),
    ...(q.action ? { action: q.action } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
    limit: q.limit,
    order: q.order,
    format: q.format,
  };
}

/** The audit log (sessions): admins read every entry, members the entries of their clients. */
export default async function auditRoutes(app: FastifyInstance): Promise<void> {
  app.get<{ Querystring: AuditQueryString }>('/v1/bi/admin/audit/:userId', { schema: auditSchemas.read }, async (req, reply) => {
    const { format, ...query } = readAuditQuery(req.query);
    const clients = app.runtime.authz.registryTenants(principalOf(req));
    if (format === 'ndjson') {
      const lines = (function* () {
        for (const entry of iterateAudit(app.runtime.db, { ...query, clients })) yield `${JSON.stringify(entry)}\n`;
      })();
      return reply.type('application/x-ndjson').send(Readable.from(lines));
    }
    return { success: true, ...readAudit(app.runtime.db, { ...query, clients }) };
  });
}
