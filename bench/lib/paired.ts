import { round, type LoadResult } from './load.ts';

/** A process under load: one short load against it, and its CPU time so far (ms, from /proc). */
export interface Side {
  load(seconds: number): Promise<LoadResult>;
  cpuMs(): number | undefined;
}

/** One load of one side, with the CPU time its process spent during it. */
export interface SideLoad {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
  non2xx: number;
  cpuMs: number;
  /** CPU time per request, µs (NaN without /proc). */
  cpuPerRequestUs: number;
}

/** Two adjacent loads, one of each side: the ratios of that pair alone. */
export interface Pair {
  a: SideLoad;
  b: SideLoad;
  /** Throughput a / b. */
  rpsRatio: number;
  /** CPU per request b / a (above 1: a costs less per request than b). */
  cpuRatio: number;
}

export interface PairedResult {
  /** The warm-up loads of each side (req/s), until its throughput was steady or the cap was hit. */
  warmup: { a: number[]; b: number[]; steady: boolean };
  pairs: Pair[];
  /** Median over the pairs of a / b throughput, and of b / a CPU per request. */
  rpsRatio: number;
  cpuRatio: number;
  /** The 25th and 75th percentile of the pair ratios: how far the pairs disagree. */
  rpsRatioIqr: [number, number];
  cpuRatioIqr: [number, number];
  /** CPU per request of each side over all its measured loads, µs. */
  cpuPerRequestUs: { a: number; b: number };
}

export interface PairedOptions {
  /** Seconds of each measured load. */
  seconds: number;
  /** Measured pairs (odd: the median is one pair's ratio). */
  pairs: number;
  /** Seconds of each warm-up load. */
  warmupSeconds: number;
  /** Warm-up loads per side at most. */
  maxWarmup: number;
  /** Steady: the last two warm-up loads of a side differ by at most this fraction. */
  tolerance?: number;
}

/** Linear-interpolated quantile, q in 0..1. */
export function quantile(values: number[], q: number): number {
  if (!values.length) return Number.NaN;
  const s = [...values].sort((x, y) => x - y);
  const pos = (s.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return (s[lo] as number) + ((s[hi] as number) - (s[lo] as number)) * (pos - lo);
}

/** The median (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  return quantile(values, 0.5);
}

/** Whether the last two of `rps` are within `tolerance` of each other. */
export function steady(rps: number[], tolerance: number): boolean {
  if (rps.length < 2) return false;
  const x = rps[rps.length - 2] as number;
  const y = rps[rps.length - 1] as number;
  return Math.abs(x - y) <= tolerance * Math.max(x, y);
}

async function measure(side: Side, seconds: number): Promise<SideLoad> {
  const c0 = side.cpuMs();
  const r = await side.load(seconds);
  const c1 = side.cpuMs();
  const cpuMs = c0 !== undefined && c1 !== undefined ? c1 - c0 : Number.NaN;
  return { rps: r.rps, requests: r.requests, p50: r.p50, p99: r.p99, non2xx: r.non2xx, cpuMs, cpuPerRequestUs: round((cpuMs * 1000) / r.requests, 1) };
}

/**
 * Compares two processes in the same run: both warmed (alternated) until each one's throughput
 * is steady, then `pairs` pairs of adjacent short loads, A B A B …, so every load follows a load
 * of the other side (A B B A gave the side that had just run a head start: 0.56–1.77 within one
 * run). Each pair gives its own ratios; the result is their median — a pair that a burst of the
 * machine's other work fell into moves the median no more than any other pair.
 */
export async function pairedLoads(a: Side, b: Side, opts: PairedOptions): Promise<PairedResult> {
  const tolerance = opts.tolerance ?? 0.05;
  const warm = { a: [] as number[], b: [] as number[] };
  while ((!steady(warm.a, tolerance) || !steady(warm.b, tolerance)) && Math.max(warm.a.length, warm.b.length) < opts.maxWarmup) {
    if (!steady(warm.a, tolerance)) warm.a.push((await a.load(opts.warmupSeconds)).rps);
    if (!steady(warm.b, tolerance)) warm.b.push((await b.load(opts.warmupSeconds)).rps);
  }
  const pairs: Pair[] = [];
  for (let i = 0; i < opts.pairs; i++) {
    const la = await measure(a, opts.seconds);
    const lb = await measure(b, opts.seconds);
    pairs.push({ a: la, b: lb, rpsRatio: round(la.rps / lb.rps, 3), cpuRatio: round(lb.cpuPerRequestUs / la.cpuPerRequestUs, 3) });
  }
  const rps = pairs.map((p) => p.rpsRatio);
  const cpu = pairs.map((p) => p.cpuRatio);
  const perRequest = (side: 'a' | 'b') => round((pairs.reduce((n, p) => n + p[side].cpuMs, 0) * 1000) / pairs.reduce((n, p) => n + p[side].requests, 0), 1);
  return {
    warmup: { ...warm, steady: steady(warm.a, tolerance) && steady(warm.b, tolerance) },
    pairs,
    rpsRatio: round(median(rps), 3),
    cpuRatio: round(median(cpu), 3),
    rpsRatioIqr: [round(quantile(rps, 0.25), 3), round(quantile(rps, 0.75), 3)],
    cpuRatioIqr: [round(quantile(cpu, 0.25), 3), round(quantile(cpu, 0.75), 3)],
    cpuPerRequestUs: { a: perRequest('a'), b: perRequest('b') },
  };
}
