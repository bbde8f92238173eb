import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Batch, EgressPolicy, Row } from '../../types.ts';
import { isObject } from '../step.ts';
import { SourceAgents, pinnedRequest } from './http.ts';
import { JsonRowsReader, JsonShapeError, NdjsonReader } from './json-rows.ts';
import { type SourceLimits, SourceLimitError, boundedChunks } from './limits.ts';

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
  /** One response (page) and one record at most. */
  limits: SourceLimits;
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

/** Headers that carry a credential: never sent past a redirect to another origin. */
const CREDENTIAL_HEADER = /auth|cookie|token|key|secret|session|signature|password|credential/i;

export function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADER.test(name)));
}

/**
 * One request, redirects followed by hand (at most MAX_REDIRECTS): every hop passes the egress
 * check and goes to the address checked; a hop to another origin (scheme, host, port) drops every
 * credential header for the rest of the chain.
 */
async function fetchChecked(url: URL, o: ApiSourceOptions, agents: SourceAgents): Promise<IncomingMessage> {
  let current = url;
  let headers: Record<string, string> = { accept: 'application/json', ...o.headers };
  let method = o.method;
  for (let hop = 0; ; hop++) {
    if (current.protocol !== 'http:' && current.protocol !== 'https:') {
      // A redirect's URL is the response's content: only its scheme is named.
      throw new Error(hop === 0 ? `API URL ${current.href} must be http or https` : `API ${url.href}: redirect ${hop} leads to a ${current.protocol.replace(/[^a-z0-9+.-]/gi, '')} URL (only http and https)`);
    }
    const addresses = await o.egress.endpoint(current.hostname, portOf(current));
    const res = await pinnedRequest({ url: current, method, headers, addresses, agents, signal: o.signal, timeoutMs: o.timeoutMs });
    const status = res.statusCode ?? 0;
    const location = res.headers.location;
    if (status < 300 || status >= 400 || !location) return res;
    res.destroy();
    if (hop >= MAX_REDIRECTS) throw new Error(`API ${url.href}: more than ${MAX_REDIRECTS} redirects`);
    const next = new URL(location, current);
    if (next.origin !== current.origin) headers = withoutCredentials(headers);
    if ((status === 303 && method !== 'HEAD') || ((status === 301 || status === 302) && method === 'POST')) method = 'GET';
    current = next;
  }
}

const retryable = (status: number): boolean => status === 429 || status >= 500;

const sizeOf = (res: IncomingMessage): string => {
  const length = Number(res.headers['content-length']);
  return res.headers['content-length'] !== undefined && Number.isInteger(length) && length >= 0 ? ` (${length} bytes)` : '';
};

/** A page's successful response (its body not read yet), retrying 429/5xx/network failures with capped exponential backoff. */
async function getPage(url: URL, o: ApiSourceOptions, agents: SourceAgents): Promise<IncomingMessage> {
  for (let attempt = 0; ; attempt++) {
    let problem: string;
    let retryAfterMs: number | undefined;
    try {
      const res = await fetchChecked(url, o, agents);
      const status = res.statusCode ?? 0;
      if (status >= 200 && status < 300) return res;
      res.destroy();
      // The status code and the body's announced size only: the reason phrase and the body are the server's content.
      if (!retryable(status)) throw new Error(`API ${url.href} answered ${status}${sizeOf(res)}`);
      problem = `answered ${status}`;
      const header = res.headers['retry-after'];
      const after = Number(header);
      if (header !== undefined && header !== '' && Number.isFinite(after) && after >= 0) retryAfterMs = after * 1000;
    } catch (err) {
      if (o.signal.aborted) throw err;
      const e = err as Error & { code?: string };
      const network = e.name === 'TimeoutError' || typeof e.code === 'string';
      if (!network) throw err;
      problem = e.name === 'TimeoutError' ? `did not answer within ${o.timeoutMs} ms` : `failed: ${e.code ?? e.message}`;
    }
    if (attempt >= o.maxRetries) throw new Error(`API ${url.href} ${problem} (gave up after ${attempt + 1} attempts)`);
    const delay = Math.min(o.backoffMaxMs, retryAfterMs ?? o.backoffBaseMs * 2 ** attempt);
    o.log(`API ${url.href} ${problem}: retry ${attempt + 1} of ${o.maxRetries} in ${delay} ms`);
    await o.sleep(delay, o.signal);
  }
}

const NDJSON = /^\s*application\/(x-)?(ndjson|jsonl|jsonlines|json-seq)\b/i;

/** The body as sent (gzip, deflate and br decoded: the caps count what is parsed). */
function decoded(res: IncomingMessage): Readable {
  const encoding = String(res.headers['content-encoding'] ?? '').trim().toLowerCase();
  const z = encoding === 'gzip' || encoding === 'x-gzip' ? createGunzip() : encoding === 'deflate' ? createInflate() : encoding === 'br' ? createBrotliDecompress() : undefined;
  if (!z) return res;
  res.on('error', (err) => z.destroy(err));
  z.on('close', () => res.destroy());
  return res.pipe(z);
}

const asRow = (v: unknown): Row => (isObject(v) ? v : { value: v });

/**
 * The rows of one page, streamed as the steps take them (the body is read no faster): the
 * elements of the array at `rootKey` (or NDJSON lines, by content type). Answers the page's
 * pagination token, which may come before or after the array.
 */
async function* pageRows(res: IncomingMessage, url: URL, o: ApiSourceOptions): AsyncGenerator<Batch, unknown> {
  const reader = NDJSON.test(String(res.headers['content-type'] ?? ''))
    ? new NdjsonReader(o.limits.maxRecordBytes)
    : new JsonRowsReader({ rootKey: o.rootKey, keep: o.paginationKey, maxRecordBytes: o.limits.maxRecordBytes });
  let batch: Batch = [];
  let bytes = 0;
  try {
    for await (const chunk of boundedChunks(decoded(res), { maxBytes: o.limits.maxResponseBytes, idleMs: o.timeoutMs })) {
      bytes += chunk.length;
      for (const v of reader.write(chunk)) {
        batch.push(asRow(v));
        if (batch.length >= o.batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
    for (const v of reader.end()) batch.push(asRow(v));
  } catch (err) {
    if (o.signal.aborted) throw err;
    const e = err as Error & { code?: string };
    if (err instanceof SourceLimitError || err instanceof JsonShapeError) throw new Error(`API ${url.href}: ${e.message}`);
    if (e.name === 'TimeoutError') throw new Error(`API ${url.href}: the response ${e.message} (after ${bytes} bytes)`);
    if (typeof e.code === 'string') throw new Error(`API ${url.href}: the response broke off after ${bytes} bytes: ${e.code}`);
    throw new Error(`API ${url.href} answered ${res.statusCode ?? 0} with a body that is not JSON (${bytes} bytes read)`);
  }
  for (let i = 0; i < batch.length; i += o.batchSize) yield batch.slice(i, i + o.batchSize);
  return reader instanceof JsonRowsReader ? reader.kept : undefined;
}

/**
 * The rows of an HTTP API: the array at `rootKey` (dotted path; the body itself when absent) of
 * each page, streamed (never a whole response or record in memory: BI_RUN_MAX_RESPONSE_BYTES,
 * BI_RUN_MAX_RECORD_BYTES); the next page is requested while the response carries
 * `paginationKey` (not null), with that token as the query parameter of the same name.
 */
export async function* apiRows(o: ApiSourceOptions): AsyncIterable<Batch> {
  let url = new URL(o.endpoint);
  const seen = new Set<string>();
  const agents = new SourceAgents();
  try {
    for (let page = 1; ; page++) {
      const res = await getPage(url, o, agents);
      const token = yield* pageRows(res, url, o);
      if (!o.paginationKey) return;
      if (token === undefined || token === null || token === '') return;
      const next = typeof token === 'object' ? JSON.stringify(token) : String(token);
      if (seen.has(next)) throw new Error(`API pagination: page ${page + 1} would repeat an earlier token (the server does not advance)`);
      if (page >= o.maxPages) throw new Error(`API pagination: more than ${o.maxPages} pages`);
      seen.add(next);
      url = new URL(url);
      url.searchParams.set(o.paginationKey, next);
    }
  } finally {
    agents.close();
  }
}
