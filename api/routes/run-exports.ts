import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import { runVisibleTo } from '../../controller/runs/access.ts';
import { RunStore } from '../../controller/runs/store.ts';
import { principalOf } from '../auth/principal.ts';
import { runExportSchemas } from '../schemas/run-exports.ts';
import { logFilter, rejectFilter } from './pipeline-runs.ts';

type Format = 'csv' | 'ndjson';

/** One CSV field: quoted when it must be, and no text is read as a formula by a spreadsheet (=, +, -, @ get a leading '; numbers stay numbers). */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const csvLine = (fields: unknown[]) => `${fields.map(csvField).join(',')}\r\n`;

/**
 * Downloads of a run's rejected rows and log lines (S: the caller's runs, like the reads), with
 * the reads' filters, as CSV or NDJSON, streamed a page at a time: every kept row, not a page.
 */
export default async function runExportRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;

  app.get<{ Params: { runId: string; what: 'rejects' | 'logs' }; Querystring: { format?: Format; step?: string; reason?: string; level?: string } }>(
    '/v1/sdk/pipeline-runs/:runId/export/:what/:userId',
    // The CSRF token may come as `?ctn=`: a download link sends no header (read-only, like the event stream).
    { schema: runExportSchemas.export },
    async (req, reply) => {
      // `what`, `format` and the filters were checked at the edge by the route's schema.
      const { runId, what } = req.params;
      const q = req.query ?? {};
      const format = (q.format ?? 'csv') as Format;
      const run = RunStore.isRunId(runId) ? rt.runs.store.get(runId) : undefined;
      if (!run || !runVisibleTo(rt.db, rt.authz, principalOf(req), run.pipelineId)) throw new NotFoundError(`Run ${runId} not found`);
      const store = rt.runs.store;
      let lines: Iterable<string>;
      if (what === 'rejects') {
        const filter = rejectFilter(q);
        if (format === 'ndjson') lines = map(store.eachReject(runId, filter), (r) => `${JSON.stringify(r)}\n`);
        else {
          // The columns: step, reasons, then every field any kept row has (a first pass over the ≤ 1,000 kept rows).
          const fields = new Set<string>();
          for (const r of store.eachReject(runId, filter)) for (const k of Object.keys(r.row)) fields.add(k);
          const columns = [...fields];
          lines = (function* () {
            yield csvLine(['step', 'reasons', ...columns]);
            for (const r of store.eachReject(runId, filter)) yield csvLine([r.step, r.reasons.join('; '), ...columns.map((c) => r.row[c])]);
          })();
        }
      } else {
        const filter = logFilter(q);
        lines =
          format === 'ndjson'
            ? map(store.eachLog(runId, filter), (l) => `${JSON.stringify(l)}\n`)
            : (function* () {
                yield csvLine(['at', 'level', 'message']);
                for (const l of store.eachLog(runId, filter)) yield csvLine([l.at, l.level, l.message]);
              })();
      }
      return reply
        .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8')
        .header('content-disposition', `attachment; filename="${runId}-${what}.${format}"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(lines));
    },
  );
}

function* map<T, U>(items: Iterable<T>, fn: (item: T) => U): Generator<U> {
  for (const item of items) yield fn(item);
}
