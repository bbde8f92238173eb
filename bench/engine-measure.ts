/**
 * One measurement of the pipeline engine (not part of `npm run bench`): 1,000,000 rows × 10 columns
 * PostgreSQL → transform (3 rules) → validate (3 rules) → load (replace), against the floor of
 * `COPY (SELECT …) TO STDOUT` piped into `COPY … FROM STDIN`. Needs the local PostgreSQL.
 *   node --import tsx bench/engine-measure.ts [rows]
 */
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { StreamingPipelineEngine } from '../controller/runs/engine/engine.ts';
import type { ResolvedConnection } from '../controller/runs/types.ts';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const schema = `bi_bench_${process.pid}`;
const base = { host: process.env.PGHOST ?? '127.0.0.1', port: Number(process.env.PGPORT ?? 5432), database: process.env.PGDATABASE ?? 'test', user: process.env.PGUSER ?? 'postgres' };

async function client(): Promise<pg.Client> {
  const c = new pg.Client(base);
  await c.connect();
  return c;
}

const admin = await client();
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
try {
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE UNLOGGED TABLE ${schema}.src AS SELECT i AS id, 'name ' || i AS name, (i % 1000) AS qty, (i * 1.25)::numeric(12,2) AS price,
    DATE '2020-01-01' + (i % 1000) AS day, '  padded ' || (i % 97) || '  ' AS note, (i % 2 = 0) AS flag, (i % 120) AS age,
    'code-' || (i % 10) AS code, TIMESTAMP '2026-01-01 00:00:00' + i * INTERVAL '1 second' AS at FROM generate_series(1, ${ROWS}) i`);
  await admin.query(`ANALYZE ${schema}.src`);
  await admin.query(`CREATE TABLE ${schema}.floor_dst (LIKE ${schema}.src)`);

  const a = await client();
  const b = await client();
  let t = performance.now();
  await b.query('BEGIN');
  await pipeline(a.query(copyTo(`COPY (SELECT * FROM ${schema}.src) TO STDOUT`)), b.query(copyFrom(`COPY ${schema}.floor_dst FROM STDIN`)));
  await b.query('COMMIT');
  const floorMs = performance.now() - t;
  const load = (await import('node:os')).loadavg()[0];
  await a.end();
  await b.end();

  const conn: ResolvedConnection = { connectionId: 'PG', vendor: 'POSTGRESQL', host: base.host, port: base.port, database: base.database, username: base.user, schema };
  const rssBefore = process.memoryUsage().rss;
  peak = rssBefore;
  t = performance.now();
  const cpu = process.cpuUsage();
  const result = await new StreamingPipelineEngine().run({
    runId: 'RUN-BENCH',
    pipelineId: 'DP-BENCH',
    source: { connectionId: 'PG', type: 'database' },
    destination: { connectionId: 'PG', type: 'database', vendor: 'POSTGRESQL' },
    steps: [
      { id: 's0', type: 'source', name: 'Source', config: { connectionId: 'PG', tableName: 'src' } },
      {
        id: 's1',
        type: 'transform',
        name: 'Transform',
        config: { rules: [{ field: 'name', rule: 'uppercase' }, { field: 'note', rule: 'trim' }, { field: 'qty', rule: 'to_string' }] },
      },
      {
        id: 's2',
        type: 'validate',
        name: 'Validate',
        config: { rules: [{ field: 'id', rule: 'not_null' }, { field: 'age', rule: 'range', params: { min: 0, max: 150 } }, { field: 'code', rule: 'regex', params: { pattern: '^code-[0-9]$' } }] },
      },
      { id: 's3', type: 'load', name: 'Load', config: { connectionId: 'PG', tableName: 'engine_dst' } },
    ],
    connections: { resolve: () => conn },
    egress: { check: async () => {} },
    filesDir: '/nonexistent',
    signal: new AbortController().signal,
    hooks: { onStep: () => {}, onReject: () => {}, onLog: () => {} },
    now: () => new Date(),
  });
  const engineMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const engineCpuMs = Math.round((used.user + used.system) / 1000);
  console.log(JSON.stringify({ rows: ROWS, status: result.status, error: result.error, rowsWritten: result.rowsWritten, floorMs: Math.round(floorMs), engineMs: Math.round(engineMs), engineCpuMs, ratio: +(engineMs / floorMs).toFixed(2), peakRssMB: Math.round(peak / 2 ** 20), rssBeforeMB: Math.round(rssBefore / 2 ** 20), maxRssMB: Math.round(process.resourceUsage().maxRSS / 1024), loadAverage: load }));
} finally {
  clearInterval(sampler);
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
