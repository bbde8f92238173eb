import type { Database, Statement } from 'better-sqlite3';

/**
 * Compiled statements by SQL text, so code can write its queries inline and a cold sync of
 * 10,000 manifests does not compile the same SQL 10,000 times (it was a sixth of the sync's
 * time). A statement's pluck/raw/expand modes are reset on every hand-out, so one caller's
 * `.pluck()` never leaks into another's — which also means a caller keeping a statement sets
 * its mode where it uses it, not once. Bounded (least recently used out) for SQL built at run time.
 */
export class StatementCache {
  readonly #db: Database;
  readonly #max: number;
  readonly #cache = new Map<string, Statement>();

  constructor(opts: { db: Database; max?: number }) {
    this.#db = opts.db;
    this.#max = opts.max ?? 500;
  }

  /** The compiled statement for `sql`: from the cache, or compiled now and kept. */
  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): Statement<P, R> {
    let stmt = this.#cache.get(sql);
    if (stmt) {
      this.#cache.delete(sql);
      if (stmt.reader) stmt.pluck(false).expand(false).raw(false);
    } else {
      stmt = this.#db.prepare(sql);
      if (this.#cache.size >= this.#max) this.#cache.delete(this.#cache.keys().next().value as string);
    }
    this.#cache.set(sql, stmt);
    return stmt as Statement<P, R>;
  }

  /** How many statements are kept. */
  get size(): number {
    return this.#cache.size;
  }
}
