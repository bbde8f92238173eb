import type { Database, Statement } from 'better-sqlite3';

/**
 * Makes `db.prepare(sql)` return a cached statement for SQL it has seen before: appliers and
 * routes can write their queries inline, and a cold sync of 10,000 manifests does not compile
 * the same SQL 10,000 times (it was a sixth of the sync's time). A statement's pluck/raw/expand
 * modes are reset on every hand-out, so one caller's `.pluck()` never leaks into another's —
 * which also means a caller keeping a statement sets its mode where it uses it, not once.
 * Bounded (least recently used out) for SQL built at run time.
 */
export function cacheStatements(db: Database, max = 500): Database {
  const prepare = db.prepare.bind(db) as (sql: string) => Statement;
  const cache = new Map<string, Statement>();
  const cached = (sql: string): Statement => {
    let stmt = cache.get(sql);
    if (stmt) {
      cache.delete(sql);
      if (stmt.reader) stmt.pluck(false).expand(false).raw(false);
    } else {
      stmt = prepare(sql);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
    }
    cache.set(sql, stmt);
    return stmt;
  };
  (db as { prepare: unknown }).prepare = cached;
  return db;
}
