import { loadavg } from 'node:os';
import { pipeline as pipe } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { request } from '../lib/api-client.ts';
import { percentile, round } from '../lib/load.ts';
import { manifest, toYaml } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import { startBenchServer } from '../lib/setup.ts';

const BENCH = 'pipeline';
const PG = { host: process.env.PGHOST ?? '127.0.0.1', port: Number(process.env.PGPORT ?? 5432), database: process.env.PGDATABASE ?? 'test' };
const PG_CONNECTION_ID = 'D2026A00009';

async function connect(user: string): Promise<pg.Client> {
  const client = new pg.Client({ ...PG, user });
  await client.connect();
  return client;
}

/** The local PostgreSQL (trust auth) as `postgres` or `root`, or why not. */
async function findUser(): Promise<string | { skipped: string }> {
  const failures: string[] = [];
  for (const user of [process.env.PGUSER, 'postgres', 'root'].filter((u): u is string => !!u)) {
    try {
      await (await connect(user)).end();
      return user;
    } catch (err) {
      failures.push(`${user}: ${(err as Error).message}`);
    }
  }
  return { skipped: `no PostgreSQL at ${PG.host}:${PG.port}/${PG.database}: ${failures.join('; ')}` };
}

/** 10 columns: integers, decimals as text, dates, texts. */
export const COLUMNS = 'id integer, customer text, email text, amount numeric(12,2), qty integer, price text, country text, created date, status text, note text';

export function seedSql(schema: string, rows: number): string {
  return `INSERT INTO "${schema}".src
    SELECT i, 'customer ' || (i % 5000), 'user' || i || '@example.com', (i % 100000) / 100.0, i % 500,
           ((i % 9000) / 100.0)::text, CASE i % 3 WHEN 0 THEN 'de' WHEN 1 THEN 'fr' ELSE 'us' END,
           DATE '2026-01-01' + (i % 365), '  open  ', 'a note of some length for row ' || i
    FROM generate_series(1, ${rows}) i`;
}

/** The benchmark's rules (also measured in-process by bench/engine-measure.ts). */
export const TRANSFORM_RULES = [
  { field: 'price', rule: 'to_decimal' },
  { field: 'country', rule: 'uppercase' },
  { field: 'status', rule: 'trim' },
];
export const VALIDATE_RULES = [
  { field: 'id', rule: 'not_null' },
  { field: 'email', rule: 'email' },
  { field: 'qty', rule: 'range', params: { min: 0, max: 1000 } },
];

/**
 * The floor: the same rows through `COPY (SELECT …) TO STDOUT` piped into `COPY … FROM STDIN`,
 * in one transaction that first empties the target (what a `replace` load does).
 */
async function copyFloorMs(user: string, schema: string): Promise<number> {
  const reader = await connect(user);
  const writer = await connect(user);
  try {
    const t0 = performance.now();
    await writer.query('BEGIN');
    await writer.query(`TRUNCATE "${schema}".floor_dst`);
    await pipe(reader.query(copyTo(`COPY (SELECT * FROM "${schema}".src) TO STDOUT`)), writer.query(copyFrom(`COPY "${schema}".floor_dst FROM STDIN`)));
    await writer.query('COMMIT');
    return performance.now() - t0;
  } finally {
    await reader.end();
    await writer.end();
  }
}

/** `GET /v1/sdk/chart-types` latencies, two requests at a time, until `done()`. */
async function probeWhile(url: string, done: () => boolean): Promise<number[]> {
  const times: number[] = [];
  const worker = async () => {
    while (!done()) {
      const t0 = performance.now();
      const res = await fetch(`${url}/v1/sdk/chart-types`);
      await res.arrayBuffer();
      times.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  await Promise.all([worker(), worker()]);
  return times;
}

/**
 * 7. PostgreSQL → transform (3 rules) → validate (3 rules) → load (replace) of `rows` × 10
 * columns, started through the real server's run endpoint; against the COPY floor in the same run.
 */
export async function pipelineBench(report: Report, opts: { rows: number; base: string }): Promise<void> {
  const user = await findUser();
  if (typeof user !== 'string') {
    report.skip(BENCH, 'run / COPY floor', user.skipped);
    return;
  }
  const schema = `bench_pipeline_${process.pid}_${Date.now()}`;
  const admin = await connect(user);
  await admin.query(`CREATE SCHEMA "${schema}"`);
  try {
    await admin.query(`CREATE TABLE "${schema}".src (${COLUMNS})`);
    await admin.query(`CREATE TABLE "${schema}".floor_dst (${COLUMNS})`);
    const s0 = performance.now();
    await admin.query(seedSql(schema, opts.rows));
    await admin.query(`VACUUM ANALYZE "${schema}".src`);
    process.stdout.write(`${JSON.stringify({ bench: BENCH, seeded: opts.rows, ms: Math.round(performance.now() - s0) })}\n`);

    const connection = manifest('Connection', 'bench-postgres', {
      connectionId: PG_CONNECTION_ID,
      name: 'Bench PostgreSQL',
      vendor: 'POSTGRESQL',
      host: PG.host,
      port: PG.port,
      database: PG.database,
      schema,
      username: user,
    });
    const ctx = await startBenchServer({ prefix: 'bench-pipeline', base: opts.base, files: { 'connections/bench-postgres.yaml': toYaml(connection) } });
    try {
      const imported = await request(`${ctx.server.url}/v1/sdk/import-pipeline`, {
        headers: ctx.keyHeaders,
        body: {
          name: 'Bench pipeline',
          source: { connectionId: PG_CONNECTION_ID, type: 'database', config: { tableName: 'src' } },
          destination: { connectionId: PG_CONNECTION_ID, schemaName: schema },
          steps: [
            { type: 'transform', config: { rules: TRANSFORM_RULES } },
            { type: 'validate', config: { rules: VALIDATE_RULES } },
            { type: 'load', config: { tableName: 'dst', mode: 'replace' } },
          ],
        },
      });
      if (imported.status !== 201) {
        report.skip(BENCH, 'run / COPY floor', `pipeline import answered ${imported.status}: ${imported.text.slice(0, 200)}`);
        return;
      }
      const pipelineId = (imported.json as { data: { pipelineId: string } }).data.pipelineId;

      // Floor first, then the run, then the floor again: the mean of the two is the comparison.
      const floorA = await copyFloorMs(user, schema);
      let finished = false;
      const cpu0 = ctx.server.cpuMs();
      const t0 = performance.now();
      const started = await request(`${ctx.server.url}/v1/sdk/pipelines/${pipelineId}/runs`, { method: 'POST', headers: ctx.keyHeaders });
      if (started.status !== 202) {
        report.skip(BENCH, 'run / COPY floor', `run endpoint answered ${started.status}: ${started.text.slice(0, 200)}`);
        return;
      }
      const runId = (started.json as { run: { runId: string } }).run.runId;
      const probe = probeWhile(ctx.server.url, () => finished);
      let run: { status: string; durationMs: number | null; rowsWritten: number; rowsRead: number; error: string | null; steps: unknown[] };
      for (;;) {
        const res = await request(`${ctx.server.url}/v1/sdk/pipeline-runs/${runId}`, { headers: ctx.keyHeaders });
        run = (res.json as { run: typeof run }).run;
        if (run.status !== 'queued' && run.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const wallMs = performance.now() - t0;
      const cpu1 = ctx.server.cpuMs();
      finished = true;
      const latencies = await probe;
      const floorB = await copyFloorMs(user, schema);
      const floorMs = (floorA + floorB) / 2;
      if (run.status !== 'succeeded') {
        report.skip(BENCH, 'run / COPY floor', `the run ${run.status}: ${run.error}`);
        return;
      }
      const runMs = run.durationMs ?? wallMs;
      report.add({
        bench: BENCH,
        figure: `run of ${opts.rows} rows × 10 columns / COPY floor`,
        value: round(runMs / floorMs, 2),
        unit: '×',
        goal: '<= 2.0',
        detail: {
          runMs: Math.round(runMs),
          wallMs: Math.round(wallMs),
          // CPU the server used meanwhile (the run's worker, the API probes): less sensitive to a busy machine than the wall time
          serverCpuMs: cpu0 !== undefined && cpu1 !== undefined ? Math.round(cpu1 - cpu0) : null,
          loadAverage: loadavg()[0],
          floorMs: Math.round(floorMs),
          floorRuns: [Math.round(floorA), Math.round(floorB)],
          rowsWritten: run.rowsWritten,
          steps: run.steps,
        },
      });
      report.add({ bench: BENCH, figure: 'rows per second through the run', value: Math.round(run.rowsWritten / (runMs / 1000)), unit: 'rows/s' });
      const rss = ctx.server.peakRssMb();
      if (rss === undefined) report.skip(BENCH, 'server peak RSS', 'VmHWM is read from /proc (Linux only)');
      else report.add({ bench: BENCH, figure: 'server peak RSS (VmHWM) during the run', value: round(rss, 0), unit: 'MB', goal: '< 300' });
      report.add({
        bench: BENCH,
        figure: 'GET /v1/sdk/chart-types p99 while the run goes',
        value: round(percentile(latencies, 99), 1),
        unit: 'ms',
        goal: '< 20',
        detail: { requests: latencies.length, p50: round(percentile(latencies, 50), 1), max: round(Math.max(...latencies), 1) },
      });
    } finally {
      await ctx.close();
    }
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}
