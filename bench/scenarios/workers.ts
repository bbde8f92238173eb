import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { QueueCluster, type RunBody } from '../../test/e2e/runs/queue-cluster.ts';
import { bearer, createApiKey, login, request } from '../lib/api-client.ts';
import { percentile, round } from '../lib/load.ts';
import type { Report } from '../lib/report.ts';
import { DEFAULT_ADMIN, ServerProcess } from '../lib/server-process.ts';
import { COLUMNS, seedSql } from './pipeline.ts';

const BENCH = 'workers';

/**
 * Queue mode (README "Runs on more than one machine") against the in-process default, on this one
 * machine: a real controller with BI_QUEUE_URL and real `bictl worker` processes, the queue in the
 * local PostgreSQL. 1. dispatch latency: start → `running` on a worker (p50, p99 of 20 small runs);
 * 2. one run of `rows` × 10 columns on a worker / in-process (goal ≤ 1.2×); 3. four runs of rows/4
 * on two workers (concurrency 2 each) / in-process (BI_RUN_CONCURRENCY 2), wall time.
 */
export async function workersBench(report: Report, opts: { rows: number; base: string }): Promise<void> {
  mkdirSync(opts.base, { recursive: true });
  const c = new QueueCluster();
  let local: ServerProcess | undefined;
  try {
    await c.start();
    const S = `"${c.dataSchema}"`;
    await c.pg.query(`CREATE TABLE ${S}.src (${COLUMNS})`);
    await c.pg.query(seedSql(c.dataSchema, opts.rows).replace(`"${c.dataSchema}".src`, `${S}.src`));
    await c.pg.query(`CREATE TABLE ${S}.quarter AS SELECT * FROM ${S}.src WHERE id <= ${Math.floor(opts.rows / 4)}`);
    await c.pg.query(`CREATE TABLE ${S}.tiny AS SELECT * FROM ${S}.src WHERE id <= 10`);
    await c.pg.query(`VACUUM ANALYZE ${S}.src`);
    c.pipeline('tiny', 'tiny', 'tiny_out');
    c.pipeline('full', 'src', 'full_out');
    for (const n of [1, 2, 3, 4]) c.pipeline(`quarter-${n}`, 'quarter', `quarter_out_${n}`);
    await c.sync();
    await c.worker('bench-w1', { concurrency: 2 });

    // 1. Dispatch latency: POST → running on a worker.
    const latencies: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t0 = performance.now();
      const run = await c.startRun('tiny');
      await c.until(run.runId, (r) => r.status !== 'queued');
      latencies.push(performance.now() - t0);
      await c.ended(run.runId);
    }
    report.add({ bench: BENCH, figure: 'dispatch: start → running on a worker, p50', value: round(percentile(latencies, 50), 0), unit: 'ms' });
    report.add({ bench: BENCH, figure: 'dispatch: start → running on a worker, p99', value: round(percentile(latencies, 99), 0), unit: 'ms' });

    // The in-process controller on the same manifests (its own store).
    local = new ServerProcess({ dir: join(c.dir, 'local'), manifestsDir: join(c.dir, 'manifests'), env: { BI_CONN_LOCAL: 'x' }, logLevel: 'info' });
    await local.start();
    await local.waitReady();
    const session = await login(local.url, DEFAULT_ADMIN.username, DEFAULT_ADMIN.password);
    const key = bearer((await createApiKey(local.url, session)).apiKey);
    const list = await request(`${local.url}/v1/bi/admin/pipelines/${session.userId}`, { headers: session.headers });
    const localIds = new Map((list.json as { pipelines: { pipelineId: string; name: string }[] }).pipelines.map((p) => [p.name, p.pipelineId]));
    const runLocal = async (name: string): Promise<string> => {
      const res = await request(`${local?.url}/v1/sdk/pipelines/${localIds.get(name)}/runs`, { method: 'POST', headers: key });
      return (res.json as { run: { runId: string } }).run.runId;
    };
    const endedLocal = async (runId: string): Promise<RunBody & { durationMs: number }> => {
      for (;;) {
        const res = await request(`${local?.url}/v1/sdk/pipeline-runs/${runId}`, { headers: key });
        const run = (res.json as { run: RunBody & { durationMs: number } }).run;
        if (run.status !== 'queued' && run.status !== 'running') return run;
        await new Promise((r) => setTimeout(r, 50));
      }
    };

    // 2. One big run: worker vs in-process (the run's own duration, started → finished).
    const onWorker = (await c.ended((await c.startRun('full')).runId, 600_000)) as RunBody & { durationMs: number };
    const inProcess = await endedLocal(await runLocal('full'));
    if (onWorker.status !== 'succeeded' || inProcess.status !== 'succeeded') {
      report.skip(BENCH, 'run on a worker / in-process', `worker: ${onWorker.status} ${onWorker.error}; in-process: ${inProcess.status} ${inProcess.error}`);
    } else {
      report.add({
        bench: BENCH,
        figure: `run of ${opts.rows} rows × 10 columns on a worker / in-process`,
        value: round(onWorker.durationMs / inProcess.durationMs, 2),
        unit: '×',
        goal: '<= 1.2',
        detail: { workerMs: onWorker.durationMs, inProcessMs: inProcess.durationMs },
      });
    }

    // 3. Four runs on two workers vs in-process (wall time, first start → last end).
    await c.worker('bench-w2', { concurrency: 2 });
    const names = ['quarter-1', 'quarter-2', 'quarter-3', 'quarter-4'];
    let t0 = performance.now();
    const queued = [];
    for (const n of names) queued.push(await c.startRun(n));
    const workerRuns = await Promise.all(queued.map((r) => c.ended(r.runId, 600_000)));
    const workersMs = performance.now() - t0;
    t0 = performance.now();
    const localRunIds = [];
    for (const n of names) localRunIds.push(await runLocal(n));
    const localRuns = await Promise.all(localRunIds.map(endedLocal));
    const localMs = performance.now() - t0;
    report.add({
      bench: BENCH,
      figure: `four runs of ${Math.floor(opts.rows / 4)} rows on two workers / in-process (BI_RUN_CONCURRENCY 2), wall time`,
      value: round(workersMs / localMs, 2),
      unit: '×',
      detail: {
        workersMs: Math.round(workersMs),
        inProcessMs: Math.round(localMs),
        workers: workerRuns.map((r) => `${r.worker}: ${r.status}`),
        inProcess: localRuns.map((r) => r.status),
        note: 'one machine with 2 cores: two workers and the controller share them, so this shows the overhead, not the scale-out',
      },
    });
  } finally {
    await local?.stop();
    await c.close();
  }
}
