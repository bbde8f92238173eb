import { join } from 'node:path';
import { stringify } from 'yaml';
import { request, routeExists } from '../lib/api-client.ts';
import { gitWriteFloors, waitForCommits } from '../lib/git.ts';
import { fsyncRenameFloor } from '../lib/floors.ts';
import { load, round } from '../lib/load.ts';
import { dashboardPayload, manifest } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import { startBenchServer, type Mode } from '../lib/setup.ts';

const BENCH = 'import';

/** 2. POST /v1/sdk/import with an API key at 10 connections; unique dashboard names. */
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
      const r = await load({ url, headers: ctx.keyHeaders, connections: 10, duration: seconds, body: (i) => dashboardPayload(`bench-${mode}-${i}`) });
      const detail = { requests: r.requests, statusCodes: r.statusCodes, errors: r.errors, seconds: r.seconds, p90: r.p90, max: r.max };
      const dir = mode === 'directory';
      report.add({ bench: BENCH, figure: `${label}: imports/s`, value: r.rps, unit: 'req/s', goal: dir ? '>= 1000' : '>= 200', detail });
      report.add({ bench: BENCH, figure: `${label}: p50`, value: r.p50, unit: 'ms' });
      report.add({ bench: BENCH, figure: `${label}: p99`, value: r.p99, unit: 'ms', ...(dir ? { goal: '< 30' } : {}) });
      if (dir) {
        const text = stringify(manifest('Dashboard', 'floor', dashboardPayload('floor')));
        const floor = fsyncRenameFloor(join(ctx.dir, 'floor'), text, 300);
        report.add({ bench: 'floors', figure: 'write+fsync+rename of one dashboard manifest: p50', value: floor.p50, unit: 'ms', detail: { p99: floor.p99 } });
        report.add({ bench: 'floors', figure: 'import p50 / write+fsync+rename p50', value: round(r.p50 / Math.max(floor.p50, 0.001), 1), unit: 'x', goal: '<= 15' });
      } else {
        // What git itself costs, on the same disk right after the load: 10 writes at a time (the connections).
        const text = (i: number) => stringify(manifest('Dashboard', `floor-${i}`, dashboardPayload(`floor-${i}`)));
        const floor = gitWriteFloors(join(ctx.dir, 'floor'), text, { batch: 10, rounds: 20 });
        const perSecond = (ms: number, commits: number) => round((commits * 1000) / Math.max(ms, 0.001), 0);
        const batchRate = perSecond(floor.batchImportPush, 10);
        report.add({ bench: 'floors', figure: 'git: add + commit of one manifest through the CLI (the old way, no push): p50', value: floor.commitPerWrite, unit: 'ms', detail: { commitsPerSecond: perSecond(floor.commitPerWrite, 1) } });
        report.add({ bench: 'floors', figure: 'git: 10 commits in one fast-import + one push + reset --keep: p50', value: floor.batchImportPush, unit: 'ms', detail: { commitsPerSecond: batchRate } });
        report.add({ bench: 'floors', figure: 'git mode imports/s / commits/s of that floor', value: round(r.rps / Math.max(batchRate, 0.001), 2), unit: 'x' });
      }
    } finally {
      await ctx.close();
    }
  }
}
