import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import type { FastifyInstance } from 'fastify';

type Families = ReturnType<typeof parsePrometheusTextFormat>;

/**
 * One scrape, parsed with a real Prometheus text-format parser. `families` is the parse as is
 * (names, types, help); `samples` is the same text with histograms read as untyped series, one
 * family per `_bucket`/`_sum`/`_count` (the parser keeps the labels of labelled histograms only so).
 */
export interface Scrape {
  text: string;
  families: Families;
  samples: Families;
}

export async function scrape(app: FastifyInstance, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await app.inject({ url: '/metrics', headers });
  if (res.statusCode !== 200) throw new Error(`GET /metrics answered ${res.statusCode} ${res.body}`);
  return parseScrape(res.body);
}

export function parseScrape(text: string): Scrape {
  return {
    text,
    families: parsePrometheusTextFormat(text),
    samples: parsePrometheusTextFormat(text.replace(/^(# TYPE \S+) histogram$/gm, '$1 untyped')),
  };
}

function matches(labels: Record<string, string> | undefined, want: Record<string, string>): boolean {
  return Object.entries(want).every(([k, v]) => labels?.[k] === v);
}

/**
 * The sum of the series of `name` with these labels (0 when none): a counter or gauge, or a
 * histogram's `<name>_count` / `<name>_sum`. A histogram's own name reads its `_count`.
 */
export function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const histogram = s.families.find((f) => f.name === name)?.type === 'HISTOGRAM';
  const wanted = histogram ? `${name}_count` : name;
  if (!s.families.some((f) => f.name === name || f.name === name.replace(/_(sum|count|bucket)$/, ''))) throw new Error(`no metric ${name}`);
  // prom-client writes a histogram's series label set by label set: `_count` comes back as several families.
  return s.samples
    .filter((f) => f.name === wanted)
    .flatMap((f) => f.metrics)
    .filter((m) => matches(m.labels, labels))
    .reduce((sum, m) => sum + Number(m.value ?? 0), 0);
}

/** Every label set of every series (all families, histogram series included). */
export function allLabels(s: Scrape): Record<string, string>[] {
  return s.samples.flatMap((f) => f.metrics.map((m) => m.labels ?? {}));
}
