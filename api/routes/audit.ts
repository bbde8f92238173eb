import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { iterateAudit, readAudit, type AuditQuery } from '../../controller/audit/log.ts';
import { ValidationError } from '../../controller/errors.ts';
import type { Problem } from '../../controller/types.ts';
import { principalOf } from '../auth/principal.ts';
import { auditSchemas } from '../schemas/audit.ts';

/** `type`, `type:id`, or a bare actor ID (`U2026A00001`, a keyId, an author email) of any type. */
const ACTOR = /^((user|key|git|controller|cli)(:.{1,200})?|[^:]{1,200})$/;

/** The query of the audit read, checked: every bad value named (400). */
export function parseAuditQuery(q: Record<string, unknown>): Omit<AuditQuery, 'clients'> & { format: 'json' | 'ndjson' } {
  const problems: Problem[] = [];
  const text = (field: string): string | undefined => {
    const v = q[field];
    if (v === undefined || v === '') return undefined;
    if (typeof v !== 'string') {
      problems.push({ path: field, message: `${field} must be given once` });
      return undefined;
    }
    return v;
  };
  const date = (field: string): string | undefined => {
    const v = text(field);
    if (v === undefined) return undefined;
    const d = new Date(v);
    if (Number.isNaN(d.getTime())) problems.push({ path: field, message: `${field} must be an ISO 8601 date-time` });
    return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
  };
  const int = (field: string, min: number, max: number): number | undefined => {
    const v = text(field);
    if (v === undefined) return undefined;
    const n = /^\d{1,15}$/.test(v) ? Number(v) : NaN;
    if (!(n >= min && n <= max)) problems.push({ path: field, message: `${field} must be an integer from ${min} to ${max}` });
    return n >= min && n <= max ? n : undefined;
  };
  const clientId = text('clientId')?.trim().toUpperCase();
  const actor = text('actor');
  if (actor !== undefined && !ACTOR.test(actor)) problems.push({ path: 'actor', message: 'actor must be user, key, git, controller or cli, optionally followed by :<id>, or an actor ID' });
  const action = text('action');
  const since = date('since');
  const until = date('until');
  const cursor = int('cursor', 0, Number.MAX_SAFE_INTEGER);
  const limit = int('limit', 1, 1000) ?? 100;
  const order = text('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') problems.push({ path: 'order', message: 'order must be asc or desc' });
  const format = text('format') ?? 'json';
  if (format !== 'json' && format !== 'ndjson') problems.push({ path: 'format', message: 'format must be json or ndjson' });
  if (problems.length) throw new ValidationError(problems);
  return {
    ...(clientId ? { clientId } : {}),
    ...(actor ? { actor } : {}),
    ...(action ? { action } : {}),
    ...(since ? { since } : {}),
    ...(until ? { until } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
    limit,
    order: order as 'asc' | 'desc',
    format: format as 'json' | 'ndjson',
  };
}

/** The audit log (sessions): admins read every entry, members the entries of their clients. */
export default async function auditRoutes(app: FastifyInstance): Promise<void> {
  app.get('/v1/bi/admin/audit/:userId', { schema: auditSchemas.read }, async (req, reply) => {
    const { format, ...query } = parseAuditQuery((req.query ?? {}) as Record<string, unknown>);
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
