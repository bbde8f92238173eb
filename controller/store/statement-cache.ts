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
  /**
   * Statement and the tick it was last handed out at. Recency is a counter, not the Map's order:
   * moving an entry to the end (delete + set) on every hand-out churned the Map's table (a cold
   * sync hands out ~30 statements per key) for an eviction that happens only past `max`.
   */
  readonly #cache = new Map<string, { stmt: Statement; used: number }>();
  #tick = 0;

  constructor(opts: { db: Database; max?: number }) {
    this.#db = opts.db;
    this.#max = opts.max ?? 500;
  }

  /** The compiled statement for `sql`: from the cache, or compiled now and kept. */
  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): Statement<P, R> {
    const hit = this.#cache.get(sql);
    if (hit) {
      hit.used = ++this.#tick;
      if (hit.stmt.reader) hit.stmt.pluck(false).expand(false).raw(false);
      return hit.stmt as Statement<P, R>;
    }
    const stmt = this.#db.prepare(sql);
    if (this.#cache.size >= this.#max) this.#evictLeastRecent();
    this.#cache.set(sql, { stmt, used: ++this.#tick });
    return stmt as Statement<P, R>;
  }

  #evictLeastRecent(): void {
    let oldest: string | undefined;
    let at = Infinity;
    for (const [sql, e] of this.#cache) {
      if (e.used < at) {
        at = e.used;
        oldest = sql;
      }
    }
    if (oldest !== undefined) this.#cache.delete(oldest);
  }

  /** How many statements are kept. */
  get size(): number {
    return this.#cache.size;
  }
}
