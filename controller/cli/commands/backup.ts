import { closeSync, existsSync, openSync, statSync, unlinkSync } from 'node:fs';
import { resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { CommandContext } from '../context.ts';
import { commandConfig } from './config.ts';

export interface BackupResult {
  bytes: number;
  /** The newest migration the copy carries (what a restore needs this version of bictl, or a newer one, for). */
  schemaVersion: number;
}

/**
 * A consistent copy of the store at `dbPath` in the new file `dest` (0600), taken with SQLite's
 * online backup API: it works while a server runs on the store and writes meanwhile (a copy of
 * the file would not: the WAL holds the last writes). The copy is checked before it is kept.
 */
export async function backupStore(dbPath: string, dest: string): Promise<BackupResult> {
  if (!existsSync(dbPath)) throw new Error(`no store at ${dbPath} (BI_DB_PATH / --db)`);
  if (existsSync(dest)) throw new Error(`${dest} exists: a backup never overwrites a file`);
  closeSync(openSync(dest, 'wx', 0o600));
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    await db.backup(dest);
  } catch (err) {
    unlinkSync(dest);
    throw err;
  } finally {
    db.close();
  }
  // Read-write (nothing is written): closing it removes the WAL and SHM a read-only connection would leave.
  const copy = new Database(dest, { fileMustExist: true });
  try {
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy ${dest} fails its integrity check: ${String(check)}`);
    const schemaVersion = Number(copy.prepare('SELECT MAX(version) FROM schema_migrations').pluck().get() ?? 0);
    return { bytes: statSync(dest).size, schemaVersion };
  } finally {
    copy.close();
  }
}

export function registerBackup(ctx: CommandContext): void {
  ctx.program
    .command('backup')
    .argument('<file>', 'the new backup file (never overwritten)')
    .description('copy the store consistently into <file>, also while a server runs on it; keep BI_SECRET_KEY with it')
    .action(async (file: string) => {
      const config = commandConfig(ctx);
      const dest = resolve(file);
      const r = await backupStore(config.dbPath, dest);
      ctx.io.out(`backed up ${config.dbPath} to ${dest} (${r.bytes} bytes, schema version ${r.schemaVersion})`);
      ctx.io.err('keep BI_SECRET_KEY with this backup: the credentials stored in it are encrypted with that key');
    });
}
