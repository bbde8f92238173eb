import { answer, pathParams, route, USER_ID } from './common.ts';
import { RUN_ROW_FILTERS } from './pipeline-runs.ts';

export const runExportSchemas = {
  export: route({
    method: 'GET',
    operationId: 'exportRunRows',
    summary: 'Download a run’s rejected rows or log lines as CSV or NDJSON (every kept row, streamed)',
    description:
      'Filters as the reads: rejects `?step=&reason=`, logs `?level=&step=`. CSV: rejects have the columns step, reasons, then every field of the rows; a value starting with =, +, - or @ is prefixed with \' (no spreadsheet formulas).',
    tags: ['pipeline-runs'],
    auth: 'session',
    // A download link sends no header: the CSRF token may come as `?ctn=` (read-only, like the event stream).
    csrfFromQuery: true,
    params: pathParams({ runId: { type: 'string', pattern: '^RUN-\\d+$' }, what: { enum: ['rejects', 'logs'] }, userId: USER_ID }),
    querystring: {
      type: 'object',
      properties: {
        format: { enum: ['csv', 'ndjson'], default: 'csv' },
        ctn: { type: 'string', description: 'the CSRF token, when header CTN cannot be sent (a download link)' },
        ...RUN_ROW_FILTERS,
      },
    },
    response: {
      200: {
        description: 'The rows',
        content: { 'text/csv': { schema: { type: 'string' } }, 'application/x-ndjson': { schema: { type: 'string' } } },
      },
      400: answer('ErrorBody', 'An unknown format, kind or filter value (the field named)'),
      404: answer('ErrorBody', '`Run <ID> not found` (also a run the caller may not see)'),
    },
  }),
};
