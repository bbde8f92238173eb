import { join } from 'node:path';
import { stringify } from 'yaml';
import { request, routeExists } from '../lib/api-client.ts';
import { gitWriteFloors, waitForCommits } from '../lib/git.ts';
import { startFloor } from '../lib/floor-process.ts';
import { auditCostUs } from '../lib/audit-cost.ts';
import { fsyncRenameFloor } from '../lib/floors.ts';
import { probeWithIdleFloor } from '../lib/health-probe.ts';
import { load, round } from '../lib/load.ts';
import { dashboardPayload, manifest } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import type { ServerProcess } from '../lib/server-process.ts';
import { startBenchServer, type Mode } from '../lib/setup.ts';

const BENCH = 'import';

/**
 * CPU time from now until `perRequest`: the server's (all threads, and its main thread alone) and
 * this process's (the load generator), in µs per request; undefined off Linux.
 */
function cpuProbe(server: ServerProcess): { perRequest(requests: number): { all: number; main: number; system: number; children: number; loadGenerator: number } | undefined } {
  const all = server.cpuMs('all');
  const main = server.cpuMs('main');
  const system = server.cpuMs('system') ?? 0;
  const children = server.cpuMs('children') ?? 0;
  const mine = process.cpuUsage();
  return {
    perRequest(requests) {
      const all1 = server.cpuMs('all');
      const main1 = server.cpuMs('main');
      if (all === undefined || main === undefined || all1 === undefined || main1 === undefined || requests === 0) return undefined;
      const gen = process.cpuUsage(mine);
      const us = (ms: number) => round((ms * 1000) / requests, 0);
      return {
        all: us(all1 - all),
        main: us(main1 - main),
        // kernel time of the server itself (fork of a git process is charged here), and the CPU of its ended child processes (git)
        system: us((server.cpuMs('system') ?? 0) - system),
        children: us((server.cpuMs('children') ?? 0) - children),
        loadGenerator: us((gen.user + gen.system) / 1000),
      };
    },
  };
}

/** Connections of the second git-mode load: a batch of the git writer holds as many writes as are waiting. */
const WIDE_CONNECTIONS = 40;

/**
 * 2. POST /v1/sdk/import with an API key at 10 connections; unique dashboard names. In git mode
 * also at WIDE_CONNECTIONS: one push per batch, so the rate follows how many writes wait together.
 */
export async function importBench(report: Report, opts: { seconds: number; modes: Mode[]; base: string }): Promise<void> {
  for (const mode of opts.modes) {
    const label = `${mode} mode`;
    let ctx;
    try {
      ctx = await startBenchServer({ prefix: `bench-import-${mode}`, mode, base: opts.base });
    } catch (err) {
      report.skip(BENCH, label, `server did not start in ${mode} mode: ${(err as Error).message.split('\n')[0]}`);
      continue;
    }
    try {
      const url = `${ctx.server.url}/v1/sdk/import`;
      if (!(await routeExists(ctx.server.url, 'POST', '/v1/sdk/import', ctx.keyHeaders))) {
        report.skip(BENCH, label, 'POST /v1/sdk/import is not in this build (issue 5 not merged)');
        continue;
      }
      const probe = await request(url, { body: dashboardPayload(`probe-${mode}`), headers: ctx.keyHeaders });
      if (probe.status !== 201) {
        report.skip(BENCH, label, `a valid import answered ${probe.status}: ${probe.text.slice(0, 200)}`);
        continue;
      }
      if (ctx.bare && !(await waitForCommits(ctx.bare, 2, 10_000))) {
        report.skip(BENCH, label, 'the API write made no commit in the remote: git mode is not in this build (issue 7 not merged)');
        continue;
      }
      const seconds = mode === 'git' ? Math.max(2, Math.round(opts.seconds / 2)) : opts.seconds;
      await load({ url, headers: ctx.keyHeaders, connections: 10, duration: 1, body: (i) => dashboardPayload(`warm-${mode}-${i}`) });
      const cpu = cpuProbe(ctx.server);
      // /healthz asked one request at a time beside the load: how long the API's event loop is held during a bulk import.
      const health = await probeWithIdleFloor(ctx.server.url);
      const r = await load({ url, headers: ctx.keyHeaders, connections: 10, duration: seconds, body: (i) => dashboardPayload(`bench-${mode}-${i}`) });
      const used = cpu.perRequest(r.requests);
      const { server: healthDuring, idle: idleDuring } = await health.stop();
      const detail = { requests: r.requests, statusCodes: r.statusCodes, errors: r.errors, seconds: r.seconds, p90: r.p90, max: r.max };
      const dir = mode === 'directory';
      // Goals are ratios to floors measured in the same run (below), not absolute rates of a noisy machine.
      report.add({ bench: BENCH, figure: `${label}: imports/s`, value: r.rps, unit: 'req/s', detail });
      report.add({ bench: BENCH, figure: `${label}: p50`, value: r.p50, unit: 'ms' });
      report.add({ bench: BENCH, figure: `${label}: p99`, value: r.p99, unit: 'ms' });
      report.add({ bench: BENCH, figure: `${label}: GET /healthz p99 during the imports (10 connections)`, value: healthDuring.p99, unit: 'ms', goal: '< 50', detail: { ...healthDuring, idleProcessP99: idleDuring?.p99 } });
      if (idleDuring) report.add({ bench: 'floors', figure: `${label}: /healthz p99 of an idle bare Fastify process, probed during the same imports`, value: idleDuring.p99, unit: 'ms', detail: idleDuring });
      if (used) {
        // What each import cost in CPU, whatever the machine's noise did to the throughput.
        report.add({ bench: BENCH, figure: `${label}: server CPU per import, all threads`, value: used.all, unit: 'µs', detail: { mainThread: used.main, system: used.system, gitChildren: used.children, loadGenerator: used.loadGenerator } });
      }
      const wide = dir ? undefined : await load({ url, headers: ctx.keyHeaders, connections: WIDE_CONNECTIONS, duration: seconds, body: (i) => dashboardPayload(`wide-${mode}-${i}`) });
      if (wide) {
        const wideDetail = { requests: wide.requests, statusCodes: wide.statusCodes, errors: wide.errors, seconds: wide.seconds, p50: wide.p50, p99: wide.p99 };
        report.add({ bench: BENCH, figure: `${label}, ${WIDE_CONNECTIONS} connections: imports/s`, value: wide.rps, unit: 'req/s', detail: wideDetail });
      }
      if (dir) {
        const text = stringify(manifest('Dashboard', 'floor', dashboardPayload('floor')));
        const floor = fsyncRenameFloor(join(ctx.dir, 'floor'), text, 300);
        report.add({ bench: 'floors', figure: 'write+fsync+rename of one dashboard manifest: p50', value: floor.p50, unit: 'ms', detail: { p99: floor.p99 } });
        report.add({ bench: 'floors', figure: 'import p50 / write+fsync+rename p50', value: round(r.p50 / Math.max(floor.p50, 0.001), 1), unit: 'x' });
        await floorServerRatios(report, { dir: join(ctx.dir, 'floor-server'), seconds, rps: r.rps, cpuPerImport: used?.all });
        // The audit log's share of an import: one entry per API write, measured in this process on the product's code.
        const audit = auditCostUs(join(ctx.dir, 'audit'), 3000);
        report.add({ bench: 'floors', figure: 'audit log: CPU per entry of an import (owner lookup, chain hash, INSERT)', value: audit.perWriteUs, unit: 'µs', detail: { entries: audit.entries } });
        if (used) {
          report.add({ bench: BENCH, figure: 'audit entry CPU / server CPU per directory-mode import', value: round(audit.perWriteUs / Math.max(used.all, 1), 3), unit: 'x', goal: '<= 0.05', detail: { auditUs: audit.perWriteUs, importUs: used.all } });
        }
      } else {
        // What git itself costs, on the same disk right after the load, on a copy of the repository the
        // server wrote (as many dashboards in the folder): 10 writes at a time (the connections), and WIDE_CONNECTIONS.
        const text = (i: number) => stringify(manifest('Dashboard', `floor-${i}`, dashboardPayload(`floor-${i}`)));
        const floor = gitWriteFloors(join(ctx.dir, 'floor'), text, { batch: 10, rounds: 20, copyOf: ctx.bare, folder: 'dashboards', wideBatch: WIDE_CONNECTIONS });
        const perSecond = (ms: number, commits: number) => round((commits * 1000) / Math.max(ms, 0.001), 0);
        /** A batch floor of `commits` and the load's imports/s against it. */
        const batchFloor = (commits: number, ms: number, rps: number, load: string) => {
          const rate = perSecond(ms, commits);
          report.add({ bench: 'floors', figure: `git: ${commits} commits in one fast-import + one push + reset --keep: p50`, value: ms, unit: 'ms', detail: { commitsPerSecond: rate } });
          report.add({ bench: 'floors', figure: `git mode imports/s${load} / commits/s of that floor`, value: round(rps / Math.max(rate, 0.001), 2), unit: 'x', goal: '>= 1.0' });
        };
        report.add({ bench: 'floors', figure: 'git: add + commit of one manifest through the CLI (the old way, no push): p50', value: floor.commitPerWrite, unit: 'ms', detail: { commitsPerSecond: perSecond(floor.commitPerWrite, 1) } });
        batchFloor(10, floor.batchImportPush, r.rps, '');
        if (wide && floor.wideImportPush !== undefined) batchFloor(WIDE_CONNECTIONS, floor.wideImportPush, wide.rps, ` at ${WIDE_CONNECTIONS} connections`);
      }
    } finally {
      await ctx.close();
    }
  }
}

/**
 * The same load against the floor server (bench/floor-import-server.ts: body parse, the same
 * compiled schema, YAML, atomic write with fsync and the folder fsync, one SQLite transaction of the
 * same rows: facade, experiment, ID sequence, status, applied version, audit entry), and the
 * real server's throughput and CPU per import as ratios of the floor's, measured in the same run.
 */
async function floorServerRatios(report: Report, opts: { dir: string; seconds: number; rps: number; cpuPerImport: number | undefined }): Promise<void> {
  const floor = await startFloor('floor-import-server.ts', { FLOOR_DIR: opts.dir });
  try {
    const url = `${floor.url}/v1/sdk/import`;
    await load({ url, connections: 10, duration: 1, body: (i) => dashboardPayload(`floor-warm-${i}`) });
    const cpu0 = floor.cpuMs();
    const r = await load({ url, connections: 10, duration: opts.seconds, body: (i) => dashboardPayload(`floor-${i}`) });
    const cpu1 = floor.cpuMs();
    const cpuPerImport = cpu0 !== undefined && cpu1 !== undefined && r.requests > 0 ? round(((cpu1 - cpu0) * 1000) / r.requests, 0) : undefined;
    report.add({ bench: 'floors', figure: 'floor server (parse, validate, YAML, write+fsync+rename, one transaction): imports/s', value: r.rps, unit: 'req/s', detail: { p50: r.p50, p99: r.p99, statusCodes: r.statusCodes, cpuPerImportUs: cpuPerImport } });
    report.add({ bench: 'floors', figure: 'directory imports/s / floor server imports/s', value: round(opts.rps / Math.max(r.rps, 0.001), 2), unit: 'x', goal: '>= 0.6' });
    if (cpuPerImport !== undefined && opts.cpuPerImport !== undefined) {
      report.add({ bench: 'floors', figure: 'server CPU per import / floor server CPU per import', value: round(opts.cpuPerImport / Math.max(cpuPerImport, 1), 2), unit: 'x', goal: '<= 1.5' });
    }
  } finally {
    floor.stop();
  }
}
