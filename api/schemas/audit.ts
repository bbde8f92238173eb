import { answer, pathParams, route, USER_ID } from './common.ts';

const ASC_DESC = 'must be asc or desc';

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
    // A name given twice is refused (`x-messages.repeated`); problems name the parameter alone, as before
    // (`x-bare-paths`); since and until are read by the handler (anything Date reads).
    querystring: {
      type: 'object',
      properties: {
        clientId: { type: 'string', description: 'case-insensitive' },
        actor: {
          type: 'string',
          pattern: '^((user|key|git|controller|cli)(:.{1,200})?|[^:]{1,200})$',
          description: '`user`, `key`, `git`, `controller` or `cli`, optionally `:<id>`, or a bare actor ID of any type',
          'x-messages': { pattern: 'must be user, key, git, controller or cli, optionally followed by :<id>, or an actor ID' },
        },
        action: { type: 'string', description: 'e.g. `apply`, `prune`, `client.suspend`, `run.start`, `login.failed`' },
        since: { type: 'string', description: 'a date-time (ISO 8601)' },
        until: { type: 'string', description: 'a date-time (ISO 8601)' },
        cursor: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
        limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 },
        order: { enum: ['asc', 'desc'], default: 'desc', 'x-messages': { enum: ASC_DESC } },
        format: { enum: ['json', 'ndjson'], default: 'json', 'x-messages': { enum: 'must be json or ndjson' } },
      },
      'x-messages': { repeated: 'must be given once' },
      'x-bare-paths': true,
    },
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
