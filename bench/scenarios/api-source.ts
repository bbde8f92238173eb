import { runEndlessApi } from '../lib/endless-api.ts';
import { round } from '../lib/load.ts';
import type { Report } from '../lib/report.ts';

const BENCH = 'api source';

/** An endless, fast API response through the real server: the controller's peak RSS and the streaming rate until the response cap stops the run. */
export async function apiSourceBench(report: Report, opts: { base: string; capMiB: number }): Promise<void> {
  const r = await runEndlessApi({ prefix: 'bench-api-source', base: opts.base, env: { BI_RUN_MAX_RESPONSE_BYTES: `${opts.capMiB}MiB` } });
  if (!r.run) {
    report.skip(BENCH, 'server peak RSS, endless response', `the pipeline could not be started: ${r.import.status} ${r.import.text.slice(0, 200)}`);
    return;
  }
  const capped = r.run.status === 'failed' && (r.run.error ?? '').includes('BI_RUN_MAX_RESPONSE_BYTES');
  report.add({
    bench: BENCH,
    figure: `server peak RSS (VmHWM), endless response cut at ${opts.capMiB} MiB`,
    value: round(r.peakRssMb, 0),
    unit: 'MB',
    goal: '< 300',
    detail: { sampledRssMb: round(r.sampledRssMb, 0), run: r.run.status, cappedAtResponseLimit: capped, rowsRead: r.run.rowsRead, sentMB: round(r.sentBytes / 2 ** 20, 0) },
  });
  report.add({ bench: BENCH, figure: 'JSON streamed through the run', value: round(opts.capMiB / (r.runMs / 1000), 1), unit: 'MB/s', detail: { runMs: Math.round(r.runMs), rowsRead: r.run.rowsRead } });
}
