import { createContext, Script, type Context } from 'node:vm';
import type { Database, Statement } from 'better-sqlite3';
import type { RE2JS } from 're2js';
import { ValidationError } from '../../errors.ts';

/** A search may take this long before it is stopped (a pathological pattern), in ms. */
export const SEARCH_BUDGET_MS = 250;
/** How many recent search results are kept (until the registry changes). */
const RECENT_RESULTS = 32;

interface Corpus {
  generation: number;
  rowids: number[];
  ids: string[];
  names: string[];
  statuses: string[];
}

// Runs inside its own context so the watchdog of `timeout` can stop a backtracking regex.
const MATCH = new Script(`(() => {
  const re = new RegExp(pattern, 'i');
  const hits = [];
  for (let i = 0; i < ids.length; i++) {
    if (status !== null && statuses[i] !== status) continue;
    if (re.test(ids[i]) || re.test(names[i])) hits.push(rowids[i]);
  }
  result = hits;
})()`);

/**
 * Regular-expression search over the registry's clientId and clientName. The pattern has
 * RE2 syntax (checked by re2js); it runs as a native RegExp over an in-memory copy of the two
 * columns — reloaded when the registry changes — bounded to SEARCH_BUDGET_MS, so a
 * pathological pattern is refused instead of stalling the server. Patterns native RegExp
 * reads differently fall back to re2js (linear time, slower).
 */
export class RegistrySearch {
  readonly #generation: Statement;
  readonly #load: Statement;
  readonly #budgetMs: number;
  #corpus: Corpus | undefined;
  #context: Context | undefined;
  /** Recent results (paging through one search asks the same question again), per generation. */
  readonly #recent = new Map<string, number[]>();

  constructor(opts: { db: Database; budgetMs?: number }) {
    this.#generation = opts.db.prepare("SELECT value FROM counters WHERE name = 'clients.generation'");
    // In listing order, so matches come out sorted and a page is a slice.
    this.#load = opts.db.prepare('SELECT rowid, client_id, client_name, status FROM clients ORDER BY onboarded_date DESC, client_id');
    this.#budgetMs = opts.budgetMs ?? SEARCH_BUDGET_MS;
  }

  /** Rowids of the clients whose ID or name matches `re`, optionally of one status, in listing order (newest first). */
  match(re: RE2JS, status: string | undefined): number[] {
    const corpus = this.#current();
    const cacheKey = `${status ?? ''}\u0000${re.pattern()}`;
    const cached = this.#recent.get(cacheKey);
    if (cached) {
      this.#recent.delete(cacheKey);
      this.#recent.set(cacheKey, cached);
      return cached;
    }
    const hits = this.#run(corpus, re, status);
    this.#recent.set(cacheKey, hits);
    if (this.#recent.size > RECENT_RESULTS) this.#recent.delete(this.#recent.keys().next().value as string);
    return hits;
  }

  #run(corpus: Corpus, re: RE2JS, status: string | undefined): number[] {
    const native = nativeFlavour(re.pattern());
    if (native === undefined) return this.#matchRe2(corpus, re, status);
    const ctx = (this.#context ??= createContext({}));
    Object.assign(ctx, { ...corpus, pattern: native, status: status ?? null, result: null });
    try {
      MATCH.runInContext(ctx, { timeout: this.#budgetMs });
    } catch (err) {
      if ((err as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        throw new ValidationError([{ path: 'search', message: `search pattern is too expensive to evaluate (over ${this.#budgetMs} ms)` }]);
      }
      throw err;
    }
    return ctx.result as number[];
  }

  #matchRe2(corpus: Corpus, re: RE2JS, status: string | undefined): number[] {
    const hits: number[] = [];
    for (let i = 0; i < corpus.ids.length; i++) {
      if (status !== undefined && corpus.statuses[i] !== status) continue;
      if (re.test(corpus.ids[i]) || re.test(corpus.names[i])) hits.push(corpus.rowids[i]);
    }
    return hits;
  }

  #current(): Corpus {
    // Modes are set at use: the store hands out one shared statement per SQL text (statement-cache.ts).
    const generation = Number(this.#generation.pluck().get() ?? 0);
    if (this.#corpus?.generation === generation) return this.#corpus;
    this.#recent.clear();
    const rows = this.#load.raw().all() as [number, string, string, string][];
    this.#corpus = {
      generation,
      rowids: rows.map((r) => r[0]),
      ids: rows.map((r) => r[1]),
      names: rows.map((r) => r[2]),
      statuses: rows.map((r) => r[3]),
    };
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

const searches = new WeakMap<Database, RegistrySearch>();

/** The search of one store (its corpus cached across requests). */
export function registrySearch(db: Database): RegistrySearch {
  let s = searches.get(db);
  if (!s) searches.set(db, (s = new RegistrySearch({ db })));
  return s;
}
