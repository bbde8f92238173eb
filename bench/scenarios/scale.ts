import { mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { appendAudit } from '../../controller/audit/log.ts';
import { openStore } from '../../controller/store/db.ts';
import { login, request, routeExists } from '../lib/api-client.ts';
import { startFloor } from '../lib/floor-process.ts';
import { HealthProbe } from '../lib/health-probe.ts';
import { percentile, round } from '../lib/load.ts';
import { clientManifest, CONNECTION_ID, CORE_MODEL_ID, prerequisiteFiles, toYaml } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import { ServerProcess } from '../lib/server-process.ts';
import { scratch, writeFiles } from '../lib/setup.ts';

const BENCH = 'scale';

const clientIdOf = (i: number): string => `SCALE${String(i).padStart(5, '0')}`;

/** Time between two log lines of the server, from their own timestamps. */
function logSpanMs(log: string, from: RegExp, to: RegExp, after = 0): number | undefined {
  const text = log.slice(after);
  const a = new RegExp(`^(\\S+) \\w+\\s+${from.source}`, 'm').exec(text)?.[1];
  const b = new RegExp(`^(\\S+) \\w+\\s+${to.source}`, 'm').exec(text)?.[1];
  return a && b ? Date.parse(b) - Date.parse(a) : undefined;
}

function phases(dbPath: string): Record<string, number> {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const rows = db.prepare(`SELECT phase, count(*) AS n FROM manifests WHERE kind = 'Client' GROUP BY phase`).all() as { phase: string; n: number }[];
    return Object.fromEntries(rows.map((r) => [r.phase, r.n]));
  } finally {
    db.close();
  }
}

function firstClientMessage(dbPath: string): string {
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare(`SELECT message FROM manifests WHERE kind = 'Client' AND phase != 'Synced' LIMIT 1`).get() as { message: string } | undefined;
    return row?.message ?? '';
  } finally {
    db.close();
  }
}

/**
 * The physical floor of the cold sync's store writes: the rows one Client apply produces
 * (status row, client model, VDM, registry row, the applied version with its manifest, the audit
 * entry with its chain hash: the product's own appendAudit) for `n` clients, in ONE transaction.
 */
function sqliteFloorMs(dbPath: string, n: number): number {
  const db = openStore(dbPath);
  const at = new Date().toISOString();
  db.prepare(`INSERT INTO core_models (model_id, name, created_at, updated_at) VALUES (?, 'core', ?, ?)`).run(CORE_MODEL_ID, at, at);
  db.prepare(`INSERT INTO connections (connection_id, created_at, updated_at) VALUES (?, ?, ?)`).run(CONNECTION_ID, at, at);
  const status = db.prepare(
    `INSERT INTO manifests (key, kind, name, path, hash, spec_hash, phase, resource_ids, last_transition_at, updated_at) VALUES (?, 'Client', ?, ?, ?, ?, 'Synced', ?, ?, ?)`,
  );
  const model = db.prepare(`INSERT INTO semantic_models (model_id, client_id, core_model_id, name, manifest_key, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const vdm = db.prepare(`INSERT INTO vdms (vdm_id, model_id, client_id, connection_id, name, position, published, config, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, 1, ?, ?, ?)`);
  const client = db.prepare(
    `INSERT INTO clients (client_id, client_name, connection_id, model_id, vdm_ids, core_model_id, status, onboarded_by, onboarded_date, last_modified_date, manifest_key) VALUES (?, ?, ?, ?, ?, ?, 'ACTIVE', 'controller', ?, ?, ?)`,
  );
  const applied = db.prepare(
    `INSERT INTO applied_manifests (key, version, spec_hash, manifest, path, revision, actor, applied_at) VALUES (?, COALESCE((SELECT MAX(version) FROM applied_manifests WHERE key = ?), 0) + 1, ?, ?, ?, NULL, 'controller', ?)`,
  );
  const config = JSON.stringify(clientManifest('X').spec.vdm);
  const t0 = performance.now();
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const id = clientIdOf(i);
      const key = `Client/${id}`;
      const modelId = `SM2026A${String(i + 2).padStart(5, '0')}`;
      const vdmId = `V2026A${String(i + 1).padStart(5, '0')}`;
      status.run(key, id, `clients/${id}.yaml`, 'h'.repeat(64), 's'.repeat(64), JSON.stringify({ clientId: id, modelId, vdmIds: [vdmId] }), at, at);
      model.run(modelId, id, CORE_MODEL_ID, `${id} model`, key, at, at);
      vdm.run(vdmId, modelId, id, CONNECTION_ID, 'Mart 1', config, at, at);
      client.run(id, `${id} Retail`, CONNECTION_ID, modelId, JSON.stringify([vdmId]), CORE_MODEL_ID, at, at, key);
      applied.run(key, key, 's'.repeat(64), JSON.stringify(clientManifest(id)), `clients/${id}.yaml`, at);
      appendAudit(db, { actor: { type: 'controller', id: 'controller' }, action: 'apply', object: { kind: 'Client', id }, after: 's'.repeat(64), result: 'ok' });
    }
  })();
  const ms = performance.now() - t0;
  db.close();
  return ms;
}

/** Writes a file as an editor's atomic save does (temp file, rename), no fsync. */
function saveFile(abs: string, text: string): void {
  const tmp = `${abs}.tmp~`;
  writeFileSync(tmp, text);
  renameSync(tmp, abs);
}

/**
 * Waits until the server logged each of `ids` Synced after log offset `from` (polls the log).
 * Fails after `timeoutMs`, or after a minute without progress, naming keys that never came and
 * what the log said of them (the full log goes to the temp folder: bench/tmp is removed after the run).
 */
async function waitForSynced(server: ServerProcess, from: number, ids: string[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = -1;
  let lastProgress = Date.now();
  for (;;) {
    const synced = new Set(Array.from(server.log.slice(from).matchAll(/reconciled key=Client\/(\S+) phase=Synced/g), (m) => m[1]));
    const n = ids.filter((id) => synced.has(id)).length;
    if (n === ids.length) return;
    if (n !== last) {
      last = n;
      lastProgress = Date.now();
    }
    if (Date.now() > deadline || Date.now() - lastProgress > 60_000 || !server.running) {
      const missing = ids.filter((id) => !synced.has(id));
      const logPath = join(mkdtempSync(join(tmpdir(), 'bi-bench-scale-')), 'server.log');
      writeFileSync(logPath, server.log);
      const said = missing.slice(0, 5).map((id) => `${id}: ${server.log.slice(from).split('\n').filter((l) => l.includes(id)).slice(-2).join(' | ') || 'nothing logged'}`);
      throw new Error(`${n} of ${ids.length} changed files applied within ${Math.round((Date.now() - deadline + timeoutMs) / 1000)} s; missing ${missing.length}, e.g. ${said.join('; ')} (log: ${logPath})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * 4. Reconcile at scale: cold sync of `n` Client manifests (with `/healthz` latency while it
 * runs), no-op resync, edit-to-applied latency through the real folder watcher, peak RSS, then
 * `n / 2` files changed at once (a big commit checked out) with `/healthz` latency while they
 * are applied. 6. floors: the same files written and renamed; the same rows inserted in one
 * transaction.
 */
export async function scaleBench(report: Report, opts: { clients: number; edits: number; base: string }): Promise<void> {
  const n = opts.clients;
  const dir = scratch('bench-scale', opts.base);
  const manifestsDir = join(dir, 'manifests');
  writeFiles(manifestsDir, prerequisiteFiles());
  mkdirSync(join(manifestsDir, 'clients'), { recursive: true });
  const texts = Array.from({ length: n }, (_, i) => toYaml(clientManifest(clientIdOf(i))));
  const floorCpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) saveFile(join(manifestsDir, 'clients', `${clientIdOf(i)}.yaml`), texts[i]);
  const writeFloorMs = performance.now() - t0;
  report.add({ bench: 'floors', figure: `write+rename of ${n} Client manifest files`, value: round(writeFloorMs / 1000, 3), unit: 's' });
  const sqliteMs = sqliteFloorMs(join(dir, 'floor', 'floor.sqlite'), n);
  // The floors' own CPU (this process): compared with the server's CPU for the cold sync, a ratio the machine's other work moves less than wall time.
  const floorCpu = process.cpuUsage(floorCpu0);
  const floorCpuS = (floorCpu.user + floorCpu.system) / 1e6;
  report.add({ bench: 'floors', figure: `better-sqlite3: the rows of ${n} clients in one transaction`, value: round(sqliteMs / 1000, 3), unit: 's' });

  const server = new ServerProcess({ dir });
  // An idle process probed beside the server in each phase: the machine's scheduling floor under the /healthz p99.
  const idle = await startFloor('bare-server.ts', {}).catch(() => undefined);
  try {
    const spawned = performance.now();
    await server.start();
    const coldProbe = new HealthProbe(server.url);
    const coldIdleProbe = idle ? new HealthProbe(idle.url) : undefined;
    await server.waitForLog(/first sync (done|failed)/, 600_000);
    const coldCpuMs = server.cpuMs();
    const coldCpuS = coldCpuMs === undefined ? undefined : coldCpuMs / 1000;
    const coldHealth = await coldProbe.stop();
    const coldIdle = await coldIdleProbe?.stop();
    const wallMs = performance.now() - spawned;
    const coldMs = logSpanMs(server.log, /listening /, /first sync done/);
    const ph = phases(server.opts.dbPath);
    if ((ph.Synced ?? 0) !== n || coldMs === undefined) {
      report.skip(BENCH, `cold sync of ${n} clients`, `not all clients applied (${JSON.stringify(ph)}): ${firstClientMessage(server.opts.dbPath).slice(0, 120)}`);
      report.add({ bench: BENCH, figure: `peak RSS during a (failing) sync of ${n}`, value: round(server.peakRssMb() ?? Number.NaN, 0), unit: 'MB', goal: '< 300' });
      return;
    }
    // Judged as a ratio to its floor measured in this run (issue 30), not in seconds of a shared machine.
    report.add({ bench: BENCH, figure: `cold sync of ${n} Client manifests`, value: round(coldMs / 1000, 2), unit: 's', detail: { spawnToReadyS: round(wallMs / 1000, 2), serverCpuS: coldCpuS } });
    report.add({ bench: BENCH, figure: `GET /healthz during the cold sync of ${n}: p99`, value: coldHealth.p99, unit: 'ms', goal: '< 50', detail: { ...coldHealth, idleProcessP99: coldIdle?.p99 } });
    if (coldIdle) report.add({ bench: 'floors', figure: `/healthz p99 of an idle bare Fastify process, probed during the cold sync`, value: coldIdle.p99, unit: 'ms', detail: coldIdle });
    report.add({ bench: 'floors', figure: 'cold sync / write+rename of the files', value: round(coldMs / writeFloorMs, 1), unit: 'x' });
    report.add({ bench: 'floors', figure: 'cold sync / the same rows in one transaction', value: round(coldMs / sqliteMs, 1), unit: 'x' });
    // The floor of the cold sync as a whole: the files written and the same rows in one transaction, both measured in this run.
    report.add({
      bench: 'floors',
      figure: 'cold sync / (writing the files + the same rows in one transaction)',
      value: round(coldMs / (writeFloorMs + sqliteMs), 2),
      unit: 'x',
      goal: '<= 3',
      detail: {
        coldSyncS: round(coldMs / 1000, 2),
        floorS: round((writeFloorMs + sqliteMs) / 1000, 2),
        serverCpuS: coldCpuS === undefined ? null : round(coldCpuS, 2),
        floorCpuS: round(floorCpuS, 2),
        cpuRatio: coldCpuS === undefined ? null : round(coldCpuS / floorCpuS, 2),
      },
    });

    // No-op resync through the API (issue 7's POST /v1/reconciler/sync), when it is there.
    const session = await login(server.url, server.opts.adminUser, server.opts.adminPassword);
    if (await routeExists(server.url, 'POST', '/v1/reconciler/sync', session.headers)) {
      const times: number[] = [];
      let last = '';
      for (let i = 0; i < 3; i++) {
        const res = await request(`${server.url}/v1/reconciler/sync`, { body: {}, headers: session.headers });
        last = `${res.status}`;
        if (res.status === 200) times.push(res.ms);
      }
      if (times.length) report.add({ bench: BENCH, figure: `no-op resync of ${n} (POST /v1/reconciler/sync)`, value: round(percentile(times, 50) / 1000, 3), unit: 's', goal: '< 1', detail: { runsMs: times.map((t) => round(t, 1)) } });
      else report.skip(BENCH, `no-op resync of ${n}`, `POST /v1/reconciler/sync answered ${last}`);
    } else {
      report.skip(BENCH, `no-op resync of ${n} (POST /v1/reconciler/sync)`, 'route not in this build (issue 7 not merged); see the restart figure');
    }

    // Edit-to-applied: one file among n, saved atomically; applied = the server logs it Synced.
    const latencies: number[] = [];
    for (let e = 0; e < opts.edits; e++) {
      const id = clientIdOf((e * 7919) % n);
      const m = clientManifest(id);
      m.spec.clientName = `${id} Retail edit ${e}`;
      const from = server.log.length;
      const started = performance.now();
      saveFile(join(manifestsDir, 'clients', `${id}.yaml`), toYaml(m));
      await server.waitForLog(new RegExp(`reconciled key=Client/${id} phase=Synced`), 30_000, from);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 50));
    }
    report.add({
      bench: BENCH,
      figure: `edit-to-applied, one file among ${n}: p50`,
      value: round(percentile(latencies, 50), 1),
      unit: 'ms',
      goal: '< 300',
      detail: { edits: latencies.length, p99: round(percentile(latencies, 99), 1), max: round(Math.max(...latencies), 1) },
    });
    report.add({ bench: BENCH, figure: `peak RSS (cold sync of ${n} + edits)`, value: round(server.peakRssMb() ?? Number.NaN, 0), unit: 'MB', goal: '<= 200' });

    // A big commit checked out: half of the files changed at once, applied through the watcher.
    const big = Math.floor(n / 2);
    const bigTexts = Array.from({ length: big }, (_, i) => {
      const m = clientManifest(clientIdOf(i));
      m.spec.clientName = `${clientIdOf(i)} Retail, big change`;
      return toYaml(m);
    });
    const bigFrom = server.log.length;
    const bigProbe = new HealthProbe(server.url);
    const bigIdleProbe = idle ? new HealthProbe(idle.url) : undefined;
    const bigStarted = performance.now();
    for (let i = 0; i < big; i++) saveFile(join(manifestsDir, 'clients', `${clientIdOf(i)}.yaml`), bigTexts[i]);
    await waitForSynced(server, bigFrom, Array.from({ length: big }, (_, i) => clientIdOf(i)), 300_000);
    const bigMs = performance.now() - bigStarted;
    const bigHealth = await bigProbe.stop();
    const bigIdle = await bigIdleProbe?.stop();
    report.add({ bench: BENCH, figure: `a change of ${big} files applied through the watcher`, value: round(bigMs / 1000, 2), unit: 's', detail: { peakRssMb: round(server.peakRssMb() ?? Number.NaN, 0) } });
    report.add({ bench: BENCH, figure: `GET /healthz while ${big} changed files are applied: p99`, value: bigHealth.p99, unit: 'ms', goal: '< 50', detail: { ...bigHealth, idleProcessP99: bigIdle?.p99 } });
    if (bigIdle) report.add({ bench: 'floors', figure: `/healthz p99 of an idle bare Fastify process, probed while the ${big} files are applied`, value: bigIdle.p99, unit: 'ms', detail: bigIdle });

    // A restart on the same data: the first sync finds every file unchanged (hash only).
    await server.stop();
    const from = server.log.length;
    await server.start();
    await server.waitForLog(/first sync (done|failed)/, 300_000, from);
    const restartMs = logSpanMs(server.log, /listening /, /first sync done/, from);
    if (restartMs !== undefined) {
      report.add({ bench: BENCH, figure: `restart: first sync of ${n} unchanged files (incl. watcher start)`, value: round(restartMs / 1000, 2), unit: 's' });
    }
  } finally {
    await server.stop();
    idle?.stop();
  }
}
