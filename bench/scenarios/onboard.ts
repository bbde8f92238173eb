import { request, routeExists } from '../lib/api-client.ts';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { gitWriteFloors, waitForCommits } from '../lib/git.ts';
import { load, round } from '../lib/load.ts';
import { onboardingPackage } from '../lib/payloads.ts';
import type { Report } from '../lib/report.ts';
import { startBenchServer, type Mode } from '../lib/setup.ts';

const BENCH = 'onboard';

/** 3. POST /v1/sdk/client/onboard, 3 VDMs and 2 dashboards, a unique clientId each. */
export async function onboardBench(report: Report, opts: { amount: number; modes: Mode[]; base: string }): Promise<void> {
  for (const mode of opts.modes) {
    const label = `${mode} mode`;
    let ctx;
    try {
      ctx = await startBenchServer({ prefix: `bench-onboard-${mode}`, mode, base: opts.base });
    } catch (err) {
      report.skip(BENCH, label, `server did not start in ${mode} mode: ${(err as Error).message.split('\n')[0]}`);
      continue;
    }
    try {
      const url = `${ctx.server.url}/v1/sdk/client/onboard`;
      if (!(await routeExists(ctx.server.url, 'POST', '/v1/sdk/client/onboard', ctx.keyHeaders))) {
        report.skip(BENCH, label, 'POST /v1/sdk/client/onboard is not in this build (issue 4 not merged)');
        continue;
      }
      const probe = await request(url, { body: onboardingPackage(`PROBE${mode.toUpperCase()}`), headers: ctx.keyHeaders });
      if (probe.status !== 201) {
        report.skip(BENCH, label, `a valid onboarding answered ${probe.status}: ${probe.text.slice(0, 200)}`);
        continue;
      }
      if (ctx.bare && !(await waitForCommits(ctx.bare, 2, 10_000))) {
        report.skip(BENCH, label, 'the API write made no commit in the remote: git mode is not in this build (issue 7 not merged)');
        continue;
      }
      const amount = mode === 'git' ? Math.max(20, Math.round(opts.amount / 2)) : opts.amount;
      const tag = mode === 'git' ? 'G' : 'D';
      const r = await load({ url, headers: ctx.keyHeaders, connections: 4, amount, body: (i) => onboardingPackage(`BENCH${tag}${String(i).padStart(6, '0')}`) });
      const detail = { requests: r.requests, statusCodes: r.statusCodes, errors: r.errors, rps: r.rps, p90: r.p90, max: r.max, connections: 4 };
      report.add({ bench: BENCH, figure: `${label}: p50 (3 VDMs, 2 dashboards)`, value: r.p50, unit: 'ms', ...(mode === 'git' ? { goal: '< 100' } : {}), detail });
      report.add({ bench: BENCH, figure: `${label}: p99 (3 VDMs, 2 dashboards)`, value: r.p99, unit: 'ms' });
      if (mode === 'git') {
        // One onboarding is one commit: its floor is one fast-import + one push, on the same disk.
        const floor = gitWriteFloors(join(ctx.dir, 'floor'), (i) => stringify(onboardingPackage(`FLOOR${i}`)), { batch: 4, rounds: 20 });
        report.add({ bench: 'floors', figure: 'git: 1 commit in one fast-import + one push + reset --keep: p50', value: floor.singleImportPush, unit: 'ms' });
        report.add({ bench: 'floors', figure: 'git mode onboarding p50 / that floor', value: round(r.p50 / Math.max(floor.singleImportPush, 0.001), 1), unit: 'x' });
      }
    } finally {
      await ctx.close();
    }
  }
}
