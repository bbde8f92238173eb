import { request } from '../lib/api-client.ts';
import { load, round, type LoadResult } from '../lib/load.ts';
import type { Report } from '../lib/report.ts';
import { startFloor } from '../lib/floor-process.ts';
import { startBenchServer } from '../lib/setup.ts';

const BENCH = 'http-floor';

/**
 * 1. GET /v1/sdk/chart-types of the real server against a bare Fastify process answering the
 * same constant, alternated in one run (A B A B) so drift on a shared machine hits both.
 */
export async function httpFloor(report: Report, opts: { seconds: number }): Promise<void> {
  const ctx = await startBenchServer({ prefix: 'bench-http' });
  try {
    const probe = await request(`${ctx.server.url}/v1/sdk/chart-types`);
    if (probe.status !== 200) {
      report.skip(BENCH, 'chart-types / bare fastify', `GET /v1/sdk/chart-types answered ${probe.status} (issue 5 not merged?)`);
      return;
    }
    const bare = await startFloor('bare-server.ts', { BARE_BODY: probe.text });
    try {
      const run = (url: string, seconds: number) => load({ url: `${url}/v1/sdk/chart-types`, connections: 10, duration: seconds });
      await run(ctx.server.url, 1);
      await run(bare.url, 1);
      const ours: LoadResult[] = [];
      const floor: LoadResult[] = [];
      // CPU time of each process over its own loads: the cost per request, which the machine's other
      // work moves far less than the throughput (a loaded machine takes a bigger process's turns more).
      const cpu = { ours: 0, floor: 0 };
      const measured = async (url: string, into: LoadResult[], read: () => number | undefined, key: 'ours' | 'floor') => {
        const c0 = read();
        into.push(await run(url, opts.seconds / 2));
        const c1 = read();
        cpu[key] += c0 !== undefined && c1 !== undefined ? c1 - c0 : Number.NaN;
      };
      for (let i = 0; i < 4; i++) {
        await measured(ctx.server.url, ours, () => ctx.server.cpuMs(), 'ours');
        await measured(bare.url, floor, () => bare.cpuMs(), 'floor');
      }
      const rps = (rs: LoadResult[]) => round(rs.reduce((a, r) => a + r.rps, 0) / rs.length, 0);
      const a = rps(ours);
      const b = rps(floor);
      const perRequest = (ms: number, rs: LoadResult[]) => round((ms * 1000) / rs.reduce((n, r) => n + r.requests, 0), 1);
      // The same server with request logging off (BI_LOG_LEVEL=warn): how much of the gap is the log.
      const quiet = await startBenchServer({ prefix: 'bench-http-quiet', server: { logLevel: 'warn' } });
      let q: number;
      try {
        await run(quiet.server.url, 1);
        q = rps([await run(quiet.server.url, opts.seconds)]);
      } finally {
        await quiet.close();
      }
      const oursCpu = perRequest(cpu.ours, ours);
      const floorCpu = perRequest(cpu.floor, floor);
      report.add({ bench: BENCH, figure: 'GET /v1/sdk/chart-types', value: a, unit: 'req/s', detail: { p50: ours[1].p50, p99: ours[1].p99, non2xx: ours.reduce((n, r) => n + r.non2xx, 0), runs: ours.map((r) => r.rps), cpuPerRequestUs: oursCpu } });
      report.add({ bench: BENCH, figure: 'bare Fastify, same constant', value: b, unit: 'req/s', detail: { p50: floor[1].p50, p99: floor[1].p99, runs: floor.map((r) => r.rps), cpuPerRequestUs: floorCpu } });
      report.add({ bench: BENCH, figure: 'ratio chart-types / bare', value: round(a / b, 3), unit: 'x', goal: '>= 0.9' });
      report.add({ bench: BENCH, figure: 'CPU per request: bare / chart-types', value: round(floorCpu / oursCpu, 3), unit: 'x', detail: { chartTypesUs: oursCpu, bareUs: floorCpu } });
      report.add({ bench: BENCH, figure: 'chart-types, BI_LOG_LEVEL=warn (no request log)', value: q, unit: 'req/s', detail: { ratioToBare: round(q / b, 3) } });
    } finally {
      bare.stop();
    }
  } finally {
    await ctx.close();
  }
}
