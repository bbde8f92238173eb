import { request } from '../lib/api-client.ts';
import { HealthProbe } from '../lib/health-probe.ts';
import { round } from '../lib/load.ts';
import type { Report } from '../lib/report.ts';
import { startBenchServer } from '../lib/setup.ts';

const BENCH = 'bodies';
const MiB = 1024 * 1024;

/** About 1 MiB of `{<head>"<key>":[<item>,…]}`: the shapes that cost seconds when built, walked and validated. */
function body(head: string, key: string, item: string): string {
  const n = Math.floor((MiB - head.length - key.length - 64) / (item.length + 1));
  return `{${head}"${key}":[${Array(n).fill(item).join(',')}]}`;
}

/**
 * Big bodies are cheap (docs/contract/design.md): the server's main-thread CPU per 1 MiB body of empty
 * items (the event loop's cost; goal < 100 ms), and `/healthz` p99 while six senders push such
 * bodies (goal < 300 ms).
 */
export async function bigBodiesBench(report: Report, opts: { seconds: number; base: string }): Promise<void> {
  const ctx = await startBenchServer({ prefix: 'bench-bodies', base: opts.base });
  try {
    const url = `${ctx.server.url}/v1/sdk/import`;
    const shapes: Record<string, string> = {
      'charts of {}': body('"name":"x","dataSource":{"dbId":"D2026A00001"},', 'charts', '{}'),
      'tags of {}': body('"name":"x","dataSource":{"dbId":"D2026A00001"},"charts":[{"type":"kpi","measures":[],"dimensions":[]}],', 'tags', '{}'),
      'charts of 0': body('"name":"x","dataSource":{"dbId":"D2026A00001"},', 'charts', '0'),
    };
    for (const [shape, payload] of Object.entries(shapes)) {
      const n = 10;
      const before = ctx.server.cpuMs('main');
      const statuses = new Set<number>();
      for (let i = 0; i < n; i++) statuses.add((await request(url, { rawBody: payload, headers: { ...ctx.keyHeaders, 'content-type': 'application/json' } })).status);
      const after = ctx.server.cpuMs('main');
      if (before === undefined || after === undefined) {
        report.skip(BENCH, `event-loop time per 1 MiB body (${shape})`, 'no /proc: main-thread CPU not readable');
        continue;
      }
      report.add({ bench: BENCH, figure: `event-loop time per 1 MiB body (${shape})`, value: round((after - before) / n, 1), unit: 'ms', goal: '< 100', detail: { statuses: [...statuses], bodies: n } });
    }
    const payload = shapes['charts of {}'];
    const probe = new HealthProbe(ctx.server.url);
    const deadline = Date.now() + opts.seconds * 1000;
    let sent = 0;
    await Promise.all(
      Array.from({ length: 6 }, async () => {
        while (Date.now() < deadline) {
          await request(url, { rawBody: payload, headers: { ...ctx.keyHeaders, 'content-type': 'application/json' } });
          sent++;
        }
      }),
    );
    const health = await probe.stop();
    report.add({ bench: BENCH, figure: '/healthz p99 with six senders of 1 MiB bodies', value: health.p99, unit: 'ms', goal: '< 300', detail: { ...health, bodies: sent } });
  } finally {
    await ctx.close();
  }
}
