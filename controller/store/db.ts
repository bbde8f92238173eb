import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { ROOT } from '../paths.ts';
import { migrate, readMigrations } from './migrate.ts';
import { StatementCache } from './statement-cache.ts';

/** The SQLite store: the database, and the cache of compiled statements that goes with it. */
export type Store = Database.Database & { readonly statements: StatementCache };

export const MIGRATIONS_DIR = join(ROOT, 'controller', 'store', 'migrations');

/**
 * Opens (creating if needed) the SQLite store: WAL, foreign keys on, a busy timeout so a
 * `bictl` one-shot and the server can share the file, and every pending migration applied.
 */
export function openStore(path: string): Store {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db, readMigrations(MIGRATIONS_DIR));
  return Object.assign(db, { statements: new StatementCache({ db }) });
}
