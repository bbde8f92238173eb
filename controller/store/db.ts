import { chmodSync, closeSync, mkdirSync, openSync, statSync } from 'node:fs';
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
  if (path !== ':memory:') {
    // The data directory and the store hold credentials (stored secrets, key and password
    // hashes): owner only. SQLite gives the WAL and SHM files the store file's mode.
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    closeSync(openSync(path, 'a', 0o600));
    ownerOnly(path);
  }
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Statement journals in memory: a savepoint inside a transaction that already changed pages (a
  // key of a group commit, a key of a sync's chunk) journals those pages, and past 64 KiB SQLite
  // spills the journal to a temp file — created and deleted per transaction.
  db.pragma('temp_store = MEMORY');
  migrate(db, readMigrations(MIGRATIONS_DIR));
  if (path !== ':memory:') for (const f of [`${path}-wal`, `${path}-shm`]) ownerOnly(f);
  return Object.assign(db, { statements: new StatementCache({ db }) });
}

/** Takes group and other access away from a store file made before files were created 0600. */
function ownerOnly(file: string): void {
  try {
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
