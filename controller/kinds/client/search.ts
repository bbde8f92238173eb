import { Worker } from 'node:worker_threads';
import type { Database, Statement } from 'better-sqlite3';
import type { RE2JS } from 're2js';
import { UnavailableError, ValidationError } from '../../errors.ts';
import { SEARCH_WORKER_SOURCE } from './search-worker.ts';

/** A search may take this long before its worker is stopped (a pathological pattern), in ms. */
export const SEARCH_BUDGET_MS = 250;
/** A worker must have started matching within this (thread start, corpus decode), in ms. */
const STARTUP_MS = 10_000;
/** How many recent search results are kept (until the registry changes). */
const RECENT_RESULTS = 32;

export interface RegistrySearchOptions {
  db: Database;
  /** Time a search may run in its worker before the worker is terminated (400 to the caller). */
  budgetMs?: number;
  /** Worker threads matching at once. */
  workers?: number;
  /** Searches waiting for a worker; one more is refused at once (503). */
  maxQueued?: number;
}

/** The registry's (clientId, clientName, status) in listing order, in shared memory for the workers. */
interface Corpus {
  generation: number;
  rowids: SharedArrayBuffer;
  /** UTF-8 JSON of [ids, names, statuses]. */
  text: SharedArrayBuffer;
}

interface Task {
  pattern: string;
  native: string | null;
  status: string | null;
  corpus: Corpus;
  resolve(hits: number[]): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  /** The generation whose corpus this worker holds. */
  generation: number | undefined;
  busy: boolean;
}

const tooExpensive = (budgetMs: number) =>
  new ValidationError([{ path: 'search', message: `search pattern is too expensive to evaluate (over ${budgetMs} ms)` }]);

/**
 * Regular-expression search over the registry's clientId and clientName. The pattern has RE2
 * syntax (checked by re2js); it runs in worker threads — never on the main thread — as a
 * native RegExp (or re2js for syntax JavaScript reads differently) over a copy of the two
 * columns kept in shared memory and reloaded when the registry changes. A search still
 * running after `budgetMs` has its worker terminated and is answered 400, so a pathological
 * pattern costs a worker, never the server's event loop.
 */
export class RegistrySearch {
  readonly #generation: Statement;
  readonly #load: Statement;
  readonly #budgetMs: number;
  readonly #size: number;
  readonly #maxQueued: number;
  readonly #slots: Slot[] = [];
  readonly #queue: Task[] = [];
  #corpus: Corpus | undefined;
  #closed = false;
  /** Recent results (paging through one search asks the same question again), per generation. */
  readonly #recent = new Map<string, number[]>();

  constructor(opts: RegistrySearchOptions) {
    this.#generation = opts.db.prepare("SELECT value FROM counters WHERE name = 'clients.generation'");
    // In listing order, so matches come out sorted and a page is a slice.
    this.#load = opts.db.prepare('SELECT rowid, client_id, client_name, status FROM clients ORDER BY onboarded_date DESC, client_id');
    this.#budgetMs = opts.budgetMs ?? SEARCH_BUDGET_MS;
    this.#size = Math.max(1, opts.workers ?? 2);
    this.#maxQueued = Math.max(0, opts.maxQueued ?? 32);
  }

  /** Rowids of the clients whose ID or name matches `re`, optionally of one status, in listing order (newest first). */
  async match(re: RE2JS, status: string | undefined): Promise<number[]> {
    const corpus = this.#current();
    const cacheKey = `${status ?? ''}\u0000${re.pattern()}`;
    const cached = this.#recent.get(cacheKey);
    if (cached) {
      this.#recent.delete(cacheKey);
      this.#recent.set(cacheKey, cached);
      return cached;
    }
    const hits = await this.#run(corpus, re.pattern(), status);
    if (this.#corpus?.generation === corpus.generation) {
      this.#recent.set(cacheKey, hits);
      if (this.#recent.size > RECENT_RESULTS) this.#recent.delete(this.#recent.keys().next().value as string);
    }
    return hits;
  }

  /** Terminates the workers (runtime shutdown); searches still waiting are refused. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const task of this.#queue.splice(0)) task.reject(new UnavailableError('the server is shutting down'));
    await Promise.all(this.#slots.splice(0).map((s) => s.worker.terminate()));
  }

  #run(corpus: Corpus, pattern: string, status: string | undefined): Promise<number[]> {
    if (this.#closed) return Promise.reject(new UnavailableError('the server is shutting down'));
    const idle = this.#slots.some((s) => !s.busy) || this.#slots.length < this.#size;
    if (!idle && this.#queue.length >= this.#maxQueued) {
      return Promise.reject(new UnavailableError('Too many searches in progress; retry shortly'));
    }
    return new Promise((resolve, reject) => {
      this.#queue.push({ pattern, native: nativeFlavour(pattern) ?? null, status: status ?? null, corpus, resolve, reject });
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#queue.length) {
      let slot = this.#slots.find((s) => !s.busy);
      if (!slot && this.#slots.length < this.#size) slot = this.#spawn();
      if (!slot) return;
      this.#start(slot, this.#queue.shift() as Task);
    }
  }

  #spawn(): Slot {
    const worker = new Worker(SEARCH_WORKER_SOURCE, { eval: true, workerData: { resolveFrom: import.meta.url } });
    worker.unref();
    const slot: Slot = { worker, generation: undefined, busy: false };
    this.#slots.push(slot);
    return slot;
  }

  #start(slot: Slot, task: Task): void {
    slot.busy = true;
    const sendCorpus = slot.generation !== task.corpus.generation;
    slot.generation = task.corpus.generation;
    const id = Math.random();
    const done = (err: Error | undefined, hits?: number[]) => {
      clearTimeout(timer);
      slot.worker.off('message', onMessage);
      slot.worker.off('error', onError);
      if (err) task.reject(err);
      else task.resolve(hits as number[]);
    };
    const retire = () => {
      const i = this.#slots.indexOf(slot);
      if (i >= 0) this.#slots.splice(i, 1);
      void slot.worker.terminate();
    };
    const onMessage = (msg: { id: number; started?: boolean; hits?: number[]; error?: string }) => {
      if (msg.id !== id) return;
      if (msg.started) {
        // The budget counts matching only, not a new thread's start or a corpus being decoded.
        clearTimeout(timer);
        timer = setTimeout(expire, this.#budgetMs);
        timer.unref();
        return;
      }
      slot.busy = false;
      if (msg.error !== undefined) done(new ValidationError([{ path: 'search', message: `search is not a valid regular expression: ${msg.error}` }]));
      else done(undefined, msg.hits);
      this.#dispatch();
    };
    const onError = (err: Error) => {
      retire();
      done(err);
      this.#dispatch();
    };
    // The hard limit: a backtracking RegExp cannot be interrupted from inside, so its thread goes.
    const expire = () => {
      retire();
      done(tooExpensive(this.#budgetMs));
      this.#dispatch();
    };
    let timer = setTimeout(expire, STARTUP_MS);
    timer.unref();
    slot.worker.on('message', onMessage);
    slot.worker.on('error', onError);
    slot.worker.postMessage({
      id,
      generation: task.corpus.generation,
      corpus: sendCorpus ? task.corpus : undefined,
      pattern: task.pattern,
      native: task.native,
      status: task.status,
    });
  }

  #current(): Corpus {
    // Modes are set at use: the store hands out one shared statement per SQL text (statement-cache.ts).
    const generation = Number(this.#generation.pluck().get() ?? 0);
    if (this.#corpus?.generation === generation) return this.#corpus;
    this.#recent.clear();
    const rows = this.#load.raw().all() as [number, string, string, string][];
    const rowids = new SharedArrayBuffer(rows.length * 8);
    const ids = new Float64Array(rowids);
    rows.forEach((r, i) => (ids[i] = r[0]));
    const encoded = new TextEncoder().encode(JSON.stringify([rows.map((r) => r[1]), rows.map((r) => r[2]), rows.map((r) => r[3])]));
    const text = new SharedArrayBuffer(encoded.byteLength);
    new Uint8Array(text).set(encoded);
    this.#corpus = { generation, rowids, text };
    return this.#corpus;
  }
}

/** The pattern as a native RegExp source, or undefined when JavaScript would not read it as RE2 does. */
export function nativeFlavour(pattern: string): string | undefined {
  // RE2-only syntax: named groups `(?P<n>`, inline flags, \A \z, POSIX classes.
  if (/\(\?P<|\(\?[imsU-]+[):]|\\[Az]|\[\[:/.test(pattern)) return undefined;
  try {
    new RegExp(pattern, 'i');
    return pattern;
  } catch {
    return undefined;
  }
}
