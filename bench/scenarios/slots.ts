// Fair slots and run retention (docs/contract/design.md), in-process: the run store, the retention sweep
// and the in-process dispatcher with an engine whose runs take a fixed time.
import { mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../controller/config.ts';
import { silentLogger } from '../../controller/log.ts';
import { RunRetention } from '../../controller/runs/retention.ts';
import { RunStore } from '../../controller/runs/store.ts';
import type { EngineResult, PipelineEngine } from '../../controller/runs/types.ts';
import { createRuntime } from '../../controller/runtime.ts';
import { DirectorySource } from '../../controller/sources/directory.ts';
import { openStore, type Store } from '../../controller/store/db.ts';
import { manifest, toYaml } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import { scratch } from '../lib/setup.ts';

const BENCH = 'slots';
const DAY = 86_400_000;
const RETENTION_MS = 30 * DAY;

function fileBytes(db: Store, path: string): number {
  db.pragma('wal_checkpoint(TRUNCATE)');
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return size(path) + size(`${path}-wal`);
}

/**
 * `runs` ended runs over 100 days on 10 pipelines, each with 20 log lines and 20 rejected rows
 * (a run with some rejects). With retention, the sweep runs every simulated hour as the
 * controller's does; the longest batch is the longest the sweep holds the event loop.
 */
async function storeAfterRuns(
  dir: string,
  runs: number,
  retention: boolean,
): Promise<{ path: string; end: number; bytes: number; usedBytes: number; kept: number; maxBatchMs: number; sweepMs: number }> {
  const path = join(dir, `${retention ? 'with' : 'without'}.sqlite`);
  const db = openStore(path);
  let now = Date.parse('2026-01-01T00:00:00Z');
  const clock = () => new Date(now);
  const store = new RunStore({ db, clock });
  let maxBatchMs = 0;
  let sweepMs = 0;
  let batchStart = 0;
  const sweeper = new RunRetention({
    db,
    clock,
    scheduler: () => () => undefined,
    log: silentLogger(),
    retentionMs: RETENTION_MS,
    pause: async () => {
      maxBatchMs = Math.max(maxBatchMs, performance.now() - batchStart);
      await new Promise((resolve) => setImmediate(resolve));
      batchStart = performance.now();
    },
  });
  const step = { stepId: 'step-1-0', type: 'source' as const, name: 'Source', status: 'succeeded' as const, rowsIn: 0, rowsOut: 100, rowsRejected: 20, durationMs: 5, message: null };
  const every = (100 * DAY) / runs;
  let nextSweep = now + 3_600_000;
  for (let i = 0; i < runs; i++) {
    const pipelineId = `DP-${i % 10}`;
    const run = store.create({ pipelineId, trigger: 'schedule', actor: null, owner: 'bench:1', steps: [step] });
    store.markRunning(run.runId, 'bench:1');
    const at = clock().toISOString();
    store.record(run.runId, {
      logs: Array.from({ length: 20 }, (_, k) => ({ at, level: 'info' as const, message: `step ${k}: 100 rows read, 20 rejected, batch ${i}` })),
      rejects: Array.from({ length: 20 }, (_, k) => ({
        step: 'step-1-1',
        row: { id: k, email: `user${k}@example.com`, amount: '12.50', note: 'a rejected row of some length' },
        reasons: ['email must be a valid email address'],
      })),
    });
    store.finish(run.runId, { status: 'succeeded', rowsRead: 100, rowsWritten: 80, rowsRejected: 20, error: null, steps: [step] });
    now += every;
    if (retention && now >= nextSweep) {
      nextSweep += 3_600_000;
      const t0 = performance.now();
      batchStart = t0;
      await sweeper.sweep();
      maxBatchMs = Math.max(maxBatchMs, performance.now() - batchStart);
      sweepMs += performance.now() - t0;
    }
  }
  const bytes = fileBytes(db, path);
  const pages = (db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number);
  const usedBytes = pages * (db.pragma('page_size', { simple: true }) as number);
  const kept = (db.prepare('SELECT COUNT(*) AS n FROM pipeline_runs').get() as { n: number }).n;
  db.close();
  return { path, end: now, bytes, usedBytes, kept, maxBatchMs, sweepMs };
}

/**
 * The first sweep over a store that never had one (an upgrade): every run past the retention
 * at once, in batches. The longest batch is the longest the sweep holds the event loop.
 */
async function backlogSweep(
  path: string,
  now: number,
): Promise<{ runs: number; batches: number; totalMs: number; maxBatchMs: number; p50BatchMs: number; bytes: number; loadavg: number }> {
  const db = openStore(path);
  let maxBatchMs = 0;
  const batchMs: number[] = [];
  let batchStart = performance.now();
  const sweeper = new RunRetention({
    db,
    clock: () => new Date(now),
    scheduler: () => () => undefined,
    log: silentLogger(),
    retentionMs: RETENTION_MS,
    pause: async () => {
      batchMs.push(performance.now() - batchStart);
      maxBatchMs = Math.max(maxBatchMs, performance.now() - batchStart);
      await new Promise((resolve) => setImmediate(resolve));
      batchStart = performance.now();
    },
  });
  const t0 = performance.now();
  const r = await sweeper.sweep();
  const totalMs = performance.now() - t0;
  maxBatchMs = Math.max(maxBatchMs, performance.now() - batchStart);
  const bytes = fileBytes(db, path);
  db.close();
  batchMs.sort((a, b) => a - b);
  return { runs: r.runs, batches: r.batches, totalMs, maxBatchMs, p50BatchMs: batchMs[batchMs.length >> 1] ?? 0, bytes, loadavg: loadavg()[0] };
}

/** An engine whose every run takes `ms` of wall time. */
class TimedEngine implements PipelineEngine {
  constructor(readonly ms: number) {}
  async run(): Promise<EngineResult> {
    await new Promise((resolve) => setTimeout(resolve, this.ms));
    return { status: 'succeeded', rowsRead: 0, rowsWritten: 0, rowsRejected: 0, error: null, steps: [] };
  }
}

/**
 * One tenant queues `flood` runs at once, then another tenant queues one; the figure is that
 * run's queued → running delay against one run's duration (goal: at most one run's duration).
 */
async function floodDelay(dir: string, flood: number, runMs: number, concurrency: number): Promise<{ delayMs: number; fifoMs: number }> {
  const manifests = join(dir, 'manifests');
  mkdirSync(join(manifests, 'pipelines'), { recursive: true });
  for (let i = 0; i <= flood; i++) {
    const payload = { name: `p${i}`, source: { connectionId: 'D2026A00001', type: 'database' }, destination: { connectionId: 'D2026A00002' }, steps: [{ type: 'load', config: { tableName: 't' } }] };
    writeFileSync(join(manifests, 'pipelines', `p${i}.yaml`), toYaml(manifest('Pipeline', `p${i}`, payload)));
  }
  const config = loadConfig({ BI_RUN_CONCURRENCY: String(concurrency) }, { manifestsDir: manifests, dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') });
  const rt = createRuntime({ config, source: new DirectorySource({ root: manifests, watch: false }), engine: new TimedEngine(runMs) });
  await rt.start();
  try {
    await rt.syncNow();
    const ids = (rt.db.prepare("SELECT pipeline_id FROM pipelines ORDER BY CAST(substr(manifest_key, 11) AS INTEGER)").all() as { pipeline_id: string }[]).map((r) => r.pipeline_id);
    const own = rt.db.prepare('UPDATE pipelines SET owner_client_id = ? WHERE pipeline_id = ?');
    ids.forEach((id, i) => own.run(i < flood ? 'FLOOD' : 'OTHER', id));
    const d = rt.runs.dispatcher;
    for (const id of ids.slice(0, flood)) await d.start(id, 'schedule', 'scheduler');
    // The other tenant's run arrives while the flood's first runs are half done.
    await new Promise((resolve) => setTimeout(resolve, runMs / 2));
    const other = await d.start(ids[flood], 'api', null);
    const done = await d.wait(other.runId);
    const delayMs = Date.parse(done.startedAt ?? '') - Date.parse(done.queuedAt);
    await d.close();
    // First come first served, it would have waited for the whole flood ahead of it.
    return { delayMs, fifoMs: Math.ceil(flood / concurrency) * runMs - runMs / 2 };
  } finally {
    await rt.stop();
  }
}

export async function slotsBench(report: Report, opts: { runs: number; flood: number; base: string }): Promise<void> {
  const dir = scratch('slots', opts.base);
  try {
    const without = await storeAfterRuns(dir, opts.runs, false);
    const withRetention = await storeAfterRuns(dir, opts.runs, true);
    const mb = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
    report.add({
      bench: BENCH,
      figure: `store size after ${opts.runs} runs over 100 days, no retention`,
      value: mb(without.bytes),
      unit: 'MB',
      detail: { runsKept: without.kept, usedMb: mb(without.usedBytes) },
    });
    report.add({
      bench: BENCH,
      figure: `store size after ${opts.runs} runs over 100 days, retention 30 d (swept hourly)`,
      value: mb(withRetention.bytes),
      unit: 'MB',
      goal: `<= ${mb(without.bytes * 0.5)}`,
      detail: {
        runsKept: withRetention.kept,
        usedMb: mb(withRetention.usedBytes),
        sweepsTotalMs: Math.round(withRetention.sweepMs),
        longestHourlyBatchMs: Math.round(withRetention.maxBatchMs * 10) / 10,
      },
    });
    const backlog = await backlogSweep(without.path, without.end);
    report.add({
      bench: BENCH,
      figure: `retention's first sweep of the ${opts.runs}-run store: longest batch (event loop held)`,
      value: Math.round(backlog.maxBatchMs * 10) / 10,
      unit: 'ms',
      goal: '< 100',
      detail: {
        runsDeleted: backlog.runs,
        batches: backlog.batches,
        p50BatchMs: Math.round(backlog.p50BatchMs * 10) / 10,
        totalMs: Math.round(backlog.totalMs),
        fileMbAfter: mb(backlog.bytes),
        loadavg1m: Math.round(backlog.loadavg * 10) / 10,
      },
    });
    for (const concurrency of [1, 2]) {
      const runMs = 500;
      const sub = scratch(`flood-${concurrency}`, dir);
      const r = await floodDelay(sub, opts.flood, runMs, concurrency);
      report.add({
        bench: BENCH,
        figure: `another tenant's queued→running delay during a ${opts.flood}-run flood (runs of ${runMs} ms, concurrency ${concurrency})`,
        value: r.delayMs,
        unit: 'ms',
        goal: `<= ${runMs}`,
        detail: { firstComeFirstServedMs: r.fifoMs },
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
