/**
 * One in-process measurement of the pipeline engine (not part of `npm run bench`): the `pipeline`
 * bench's workload — its table, seed and rules (bench/scenarios/pipeline.ts) — PostgreSQL →
 * transform (3 rules) → validate (3 rules) → load (replace), against the floor of
 * `COPY (SELECT …) TO STDOUT` piped into `COPY … FROM STDIN`. Needs the local PostgreSQL. Profile the
 * engine alone (`--no-floor`: the floor's own COPY parsing stays out of the profile) with
 * (`--worker` runs it as the server does, in a worker thread: WorkerThreadEngine)
 *   node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof bench/engine-measure.ts [rows] [--no-floor]
 */
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { StreamingPipelineEngine } from '../controller/runs/engine/engine.ts';
import { WorkerThreadEngine } from '../controller/runs/thread-engine.ts';
import type { ResolvedConnection } from '../controller/runs/types.ts';
import { COLUMNS, TRANSFORM_RULES, VALIDATE_RULES, seedSql } from './scenarios/pipeline.ts';

const args = process.argv.slice(2);
const ROWS = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const FLOOR = !args.includes('--no-floor');
const WORKER = args.includes('--worker');
const schema = `bi_bench_${process.pid}`;
const base = { host: process.env.PGHOST ?? '127.0.0.1', port: Number(process.env.PGPORT ?? 5432), database: process.env.PGDATABASE ?? 'test', user: process.env.PGUSER ?? 'postgres' };

async function client(): Promise<pg.Client> {
  const c = new pg.Client(base);
  await c.connect();
  return c;
}

async function floorMs(): Promise<number> {
  const a = await client();
  const b = await client();
  try {
    const t = performance.now();
    await b.query('BEGIN');
    await b.query(`TRUNCATE ${schema}.floor_dst`);
    await pipeline(a.query(copyTo(`COPY (SELECT * FROM ${schema}.src) TO STDOUT`)), b.query(copyFrom(`COPY ${schema}.floor_dst FROM STDIN`)));
    await b.query('COMMIT');
    return performance.now() - t;
  } finally {
    await a.end();
    await b.end();
  }
}

const admin = await client();
let peak = 0;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
try {
  await admin.query(`CREATE SCHEMA ${schema}`);
  await admin.query(`CREATE TABLE ${schema}.src (${COLUMNS})`);
  await admin.query(`CREATE TABLE ${schema}.floor_dst (${COLUMNS})`);
  await admin.query(seedSql(schema, ROWS));
  await admin.query(`VACUUM ANALYZE ${schema}.src`);

  const floorA = FLOOR ? await floorMs() : Number.NaN;
  const load = (await import('node:os')).loadavg()[0];
  const conn: ResolvedConnection = { connectionId: 'PG', vendor: 'POSTGRESQL', host: base.host, port: base.port, database: base.database, username: base.user, schema };
  const rssBefore = process.memoryUsage().rss;
  peak = rssBefore;
  const t = performance.now();
  const cpu = process.cpuUsage();
  const engine = WORKER ? new WorkerThreadEngine({ egress: { listen: { host: '127.0.0.1', port: 1 } } }) : new StreamingPipelineEngine(process.env.BATCH ? { batchSize: Number(process.env.BATCH) } : {});
  const result = await engine.run({
    runId: 'RUN-BENCH',
    pipelineId: 'DP-BENCH',
    source: { connectionId: 'PG', type: 'database' },
    destination: { connectionId: 'PG', type: 'database', vendor: 'POSTGRESQL' },
    steps: [
      { id: 's0', type: 'source', name: 'Source', config: { connectionId: 'PG', tableName: 'src' } },
      { id: 's1', type: 'transform', name: 'Transform', config: { rules: TRANSFORM_RULES } },
      { id: 's2', type: 'validate', name: 'Validate', config: { rules: VALIDATE_RULES } },
      { id: 's3', type: 'load', name: 'Load', config: { connectionId: 'PG', tableName: 'dst', mode: 'replace' } },
    ],
    connections: { resolve: () => conn },
    egress: { check: async () => {}, endpoint: async () => [] },
    filesDir: '/nonexistent',
    signal: new AbortController().signal,
    hooks: { onStep: () => {}, onReject: () => {}, onLog: () => {} },
    now: () => new Date(),
  });
  const engineMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  const engineCpuMs = Math.round((used.user + used.system) / 1000);
  const floorB = FLOOR ? await floorMs() : Number.NaN;
  const floor = (floorA + floorB) / 2;
  console.log(
    JSON.stringify({
      rows: ROWS,
      status: result.status,
      error: result.error,
      rowsWritten: result.rowsWritten,
      floorMs: [Math.round(floorA), Math.round(floorB)],
      engineMs: Math.round(engineMs),
      engineCpuMs,
      ratio: +(engineMs / floor).toFixed(2),
      peakRssMB: Math.round(peak / 2 ** 20),
      rssBeforeMB: Math.round(rssBefore / 2 ** 20),
      loadAverage: load,
    }),
  );
} finally {
  clearInterval(sampler);
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
