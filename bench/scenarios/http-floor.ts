import { request } from '../lib/api-client.ts';
import { load, round } from '../lib/load.ts';
import { median, pairedLoads, type SideLoad } from '../lib/paired.ts';
import type { Report } from '../lib/report.ts';
import { startFloor } from '../lib/floor-process.ts';
import { startBenchServer } from '../lib/setup.ts';

const BENCH = 'http-floor';

/**
 * 1. GET /v1/sdk/chart-types of the real server against a bare Fastify process answering the
 * same constant, in one run: each warmed until its throughput is steady, then short loads
 * alternated in adjacent pairs (A B A B …), each pair's ratios on their own, the median of the
 * pairs as the figure (bench/lib/paired.ts). With `seconds` 10 (a full run) the group loads for
 * about 20 s: warm-up 6 s at most, 9 pairs of 0.8 s + 0.8 s.
 */
export async function httpFloor(report: Report, opts: { seconds: number }): Promise<void> {
  const ctx = await startBenchServer({ prefix: 'bench-http' });
  try {
    const probe = await request(`${ctx.server.url}/v1/sdk/chart-types`);
    if (probe.status !== 200) {
      report.skip(BENCH, 'ratio chart-types / bare, median of pairs', `GET /v1/sdk/chart-types answered ${probe.status} (issue 5 not merged?)`);
      return;
    }
    const bare = await startFloor('bare-server.ts', { BARE_BODY: probe.text });
    try {
      const side = (url: string, cpuMs: () => number | undefined) => ({ load: (seconds: number) => load({ url: `${url}/v1/sdk/chart-types`, connections: 10, duration: seconds }), cpuMs });
      const full = opts.seconds >= 10;
      const r = await pairedLoads(
        side(ctx.server.url, () => ctx.server.cpuMs()),
        side(bare.url, () => bare.cpuMs()),
        full ? { seconds: 0.8, pairs: 9, warmupSeconds: 0.5, maxWarmup: 6 } : { seconds: 0.3, pairs: 5, warmupSeconds: 0.3, maxWarmup: 4 },
      );
      const loads = (s: 'a' | 'b'): SideLoad[] => r.pairs.map((p) => p[s]);
      const summary = (ls: SideLoad[], cpuPerRequestUs: number, warmup: number[]) => ({
        p50: median(ls.map((l) => l.p50)),
        p99: median(ls.map((l) => l.p99)),
        non2xx: ls.reduce((n, l) => n + l.non2xx, 0),
        runs: ls.map((l) => l.rps),
        cpuPerRequestUs,
        warmup,
      });
      // Throughput: the median of each side's loads (the ratio below is taken per pair, not from these).
      report.add({ bench: BENCH, figure: 'GET /v1/sdk/chart-types', value: round(median(loads('a').map((l) => l.rps)), 0), unit: 'req/s', detail: summary(loads('a'), r.cpuPerRequestUs.a, r.warmup.a) });
      report.add({ bench: BENCH, figure: 'bare Fastify, same constant', value: round(median(loads('b').map((l) => l.rps)), 0), unit: 'req/s', detail: summary(loads('b'), r.cpuPerRequestUs.b, r.warmup.b) });
      const pairs = r.pairs.map((p) => ({ chartTypes: p.a.rps, bare: p.b.rps, rpsRatio: p.rpsRatio, chartTypesUs: p.a.cpuPerRequestUs, bareUs: p.b.cpuPerRequestUs, cpuRatio: p.cpuRatio }));
      report.add({ bench: BENCH, figure: 'ratio chart-types / bare, median of pairs', value: r.rpsRatio, unit: 'x', goal: '>= 0.9', detail: { iqr: r.rpsRatioIqr, warmupSteady: r.warmup.steady, pairs } });
      // CPU time of each process over its own loads (from /proc): the cost per request, which the machine's
      // other work moves far less than the throughput (a loaded machine takes a bigger process's turns more).
      report.add({ bench: BENCH, figure: 'CPU per request: bare / chart-types', value: round(r.cpuPerRequestUs.b / r.cpuPerRequestUs.a, 3), unit: 'x', detail: { chartTypesUs: r.cpuPerRequestUs.a, bareUs: r.cpuPerRequestUs.b } });
      report.add({ bench: BENCH, figure: 'CPU per request: bare / chart-types, median of pairs', value: r.cpuRatio, unit: 'x', detail: { iqr: r.cpuRatioIqr } });
    } finally {
      bare.stop();
    }
  } finally {
    await ctx.close();
  }
}
