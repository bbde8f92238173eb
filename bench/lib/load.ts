import autocannon, { type RawRequest, type Result } from 'autocannon';

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  connections?: number;
  /** Seconds (ignored when `amount` is set). */
  duration?: number;
  amount?: number;
  /** A fresh body per request (unique names, clientIds): called with a running counter. */
  body?: (i: number) => unknown;
  /** A path per request (pages, searches), relative to the URL's origin. */
  path?: (i: number) => string;
}

export interface LoadResult {
  /** 2xx responses per second over the whole run. */
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  statusCodes: Record<string, number>;
  seconds: number;
}

/** One autocannon run from this process against a server in another. */
export async function load(opts: LoadOptions): Promise<LoadResult> {
  let i = 0;
  const headers = { ...opts.headers, ...(opts.body ? { 'content-type': 'application/json' } : {}) };
  const bodyOf = opts.body;
  const pathOf = opts.path;
  const result: Result = await autocannon({
    url: opts.url,
    method: opts.method ?? (bodyOf ? 'POST' : 'GET'),
    headers,
    connections: opts.connections ?? 10,
    ...(opts.amount ? { amount: opts.amount } : { duration: opts.duration ?? 5 }),
    timeout: 30,
    ...(bodyOf || pathOf
      ? {
          requests: [
            {
              setupRequest: (req: RawRequest): RawRequest => {
                const n = i++;
                return { ...req, ...(bodyOf ? { body: JSON.stringify(bodyOf(n)) } : {}), ...(pathOf ? { path: pathOf(n) } : {}) };
              },
            },
          ],
        }
      : {}),
  });
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, Number(v.count)]));
  const ok = Object.entries(statusCodes)
    .filter(([k]) => k.startsWith('2'))
    .reduce((n, [, v]) => n + v, 0);
  return {
    rps: round(ok / result.duration, 1),
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    requests: Object.values(statusCodes).reduce((a, b) => a + b, 0),
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    statusCodes,
    seconds: round(result.duration, 2),
  };
}

export const round = (n: number, digits = 2): number => Math.round(n * 10 ** digits) / 10 ** digits;

/** Percentile of a sample (nearest rank), in the sample's unit. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}
