import { answer, checkedByHandler, pathParams, route, USER_ID } from './common.ts';

/** `GET /v1/bi/admin/audit/{userId}`: the hash-chained audit log, paged or exported. */
export const auditSchemas = {
  read: route({
    tags: ['audit'],
    auth: 'session',
    method: 'GET',
    operationId: 'readAudit',
    summary: 'Read the audit log: newest first (order=asc for oldest first), or an NDJSON export (format=ndjson)',
    description:
      'Admins see every entry; a member only the entries of the clients granted to them. `cursor` is the `seq` the previous page ended at (`nextCursor`); `limit` is 1 to 1000 (default 100). `format=ndjson` streams every matching entry, oldest first, one JSON object a line.',
    params: pathParams({ userId: USER_ID }),
    // Checked by parseAuditQuery (api/routes/audit.ts).
    querystring: checkedByHandler({
      type: 'object',
      properties: {
        clientId: { type: 'string' },
        actor: { type: 'string', description: '`user`, `key`, `git`, `controller` or `cli`, optionally `:<id>`' },
        action: { type: 'string', description: 'e.g. `apply`, `prune`, `client.suspend`, `run.start`, `login.failed`' },
        since: { type: 'string', format: 'date-time' },
        until: { type: 'string', format: 'date-time' },
        cursor: { type: 'integer', minimum: 0 },
        limit: { type: 'integer', minimum: 1, maximum: 1000 },
        order: { enum: ['asc', 'desc'] },
        format: { enum: ['json', 'ndjson'] },
      },
    }),
    response: {
      200: {
        description: 'A page of entries (with format=ndjson: application/x-ndjson, one AuditEntry a line)',
        content: {
          'application/json': { schema: { $ref: 'https://bi.controller/schemas/api.schema.json#/$defs/AuditPage' } },
          'application/x-ndjson': { schema: { $ref: 'https://bi.controller/schemas/api.schema.json#/$defs/AuditEntry' } },
        },
      },
      400: answer('ErrorBody', 'A bad query value, named'),
    },
  }),
};
