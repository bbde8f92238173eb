import type { Batch, EgressPolicy, Row } from '../../types.ts';
import { isObject } from '../step.ts';

export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export interface ApiSourceOptions {
  endpoint: string;
  method: string;
  rootKey: string | undefined;
  /** Set (and `paginated` not false): the response's token at this key is sent back as the query parameter of that name. */
  paginationKey: string | undefined;
  headers: Record<string, string>;
  egress: EgressPolicy;
  signal: AbortSignal;
  batchSize: number;
  /** Retries after the first attempt on 429, 5xx and network errors. */
  maxRetries: number;
  /** Backoff before retry n (0-based): base × 2ⁿ, capped; a Retry-After header (seconds) wins up to the cap. */
  backoffBaseMs: number;
  backoffMaxMs: number;
  timeoutMs: number;
  sleep: Sleep;
  /** Pages at most (a guard against a server that never stops). */
  maxPages: number;
  log: (message: string) => void;
}

export const API_DEFAULTS = { maxRetries: 4, backoffBaseMs: 500, backoffMaxMs: 10_000, timeoutMs: 30_000, maxPages: 100_000 };

export const realSleep: Sleep = (ms, signal) =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });

const MAX_REDIRECTS = 5;

function portOf(url: URL): number {
  return url.port ? Number(url.port) : url.protocol === 'https:' ? 443 : 80;
}

/** One request, redirects followed by hand so every hop passes the egress check. */
async function fetchChecked(url: URL, o: ApiSourceOptions): Promise<Response> {
  let current = url;
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') throw new Error(`API URL ${current.href} must be http or https`);
    await o.egress.check(current.hostname, portOf(current));
    const signal = AbortSignal.any([o.signal, AbortSignal.timeout(o.timeoutMs)]);
    const res = await fetch(current, { method: o.method, headers: { accept: 'application/json', ...o.headers }, redirect: 'manual', signal });
    if (res.status < 300 || res.status >= 400 || !res.headers.get('location')) return res;
    await res.body?.cancel();
    if (hop >= MAX_REDIRECTS) throw new Error(`API ${url.href}: more than ${MAX_REDIRECTS} redirects`);
    current = new URL(res.headers.get('location') as string, current);
  }
}

const retryable = (status: number): boolean => status === 429 || status >= 500;

/** A page's JSON, retrying 429/5xx/network failures with capped exponential backoff. */
async function getPage(url: URL, o: ApiSourceOptions): Promise<unknown> {
  for (let attempt = 0; ; attempt++) {
    let problem: string;
    let retryAfterMs: number | undefined;
    try {
      const res = await fetchChecked(url, o);
      if (res.ok) {
        try {
          return await res.json();
        } catch {
          // The parser's message quotes the body: never a response's content in an error.
          throw new Error(`API ${url.href} answered ${res.status} with a body that is not JSON`);
        }
      }
      await res.body?.cancel();
      if (!retryable(res.status)) throw new Error(`API ${url.href} answered ${res.status} ${res.statusText}`.trim());
      problem = `answered ${res.status}`;
      const after = Number(res.headers.get('retry-after'));
      if (Number.isFinite(after) && after >= 0 && res.headers.get('retry-after') !== null) retryAfterMs = after * 1000;
    } catch (err) {
      if (o.signal.aborted) throw err;
      const e = err as Error & { cause?: { code?: string } };
      const network = e.name === 'TimeoutError' || e.name === 'TypeError' || e.cause?.code !== undefined;
      if (!network) throw err;
      problem = e.name === 'TimeoutError' ? `did not answer within ${o.timeoutMs} ms` : `failed: ${e.cause?.code ?? e.message}`;
    }
    if (attempt >= o.maxRetries) throw new Error(`API ${url.href} ${problem} (gave up after ${attempt + 1} attempts)`);
    const delay = Math.min(o.backoffMaxMs, retryAfterMs ?? o.backoffBaseMs * 2 ** attempt);
    o.log(`API ${url.href} ${problem}: retry ${attempt + 1} of ${o.maxRetries} in ${delay} ms`);
    await o.sleep(delay, o.signal);
  }
}

function at(doc: unknown, path: string): unknown {
  let v = doc;
  for (const part of path.split('.')) v = isObject(v) ? v[part] : undefined;
  return v;
}

/**
 * The rows of an HTTP API: the array at `rootKey` (dotted path; the body itself when absent) of
 * each page; the next page is requested while the response carries `paginationKey` (not null),
 * with that token as the query parameter of the same name.
 */
export async function* apiRows(o: ApiSourceOptions): AsyncIterable<Batch> {
  let url = new URL(o.endpoint);
  const seen = new Set<string>();
  for (let page = 1; ; page++) {
    const body = await getPage(url, o);
    const items = o.rootKey ? at(body, o.rootKey) : body;
    if (!Array.isArray(items)) throw new Error(`API ${url.href}: ${o.rootKey ? `rootKey ${o.rootKey}` : 'the response'} is not an array`);
    for (let i = 0; i < items.length; i += o.batchSize) yield items.slice(i, i + o.batchSize).map((v: unknown): Row => (isObject(v) ? v : { value: v }));
    if (!o.paginationKey) return;
    const token = isObject(body) ? at(body, o.paginationKey) : undefined;
    if (token === undefined || token === null || token === '') return;
    const next = typeof token === 'object' ? JSON.stringify(token) : String(token);
    if (seen.has(next)) throw new Error(`API pagination: token ${JSON.stringify(next)} came back twice (the server does not advance)`);
    if (page >= o.maxPages) throw new Error(`API pagination: more than ${o.maxPages} pages`);
    seen.add(next);
    url = new URL(url);
    url.searchParams.set(o.paginationKey, next);
  }
}
