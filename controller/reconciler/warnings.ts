import type { Database, Statement } from 'better-sqlite3';
import { formatProblem } from '../errors.ts';
import type { Problem } from '../types.ts';

/** Reads and writes `manifest_warnings`: the warnings of each manifest file as last scanned. */
export class WarningStore {
  readonly #put: Statement;
  readonly #get: Statement;
  readonly #delete: Statement;
  readonly #all: Statement;

  constructor(db: Database) {
    this.#put = db.prepare('INSERT INTO manifest_warnings (path, warnings) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET warnings = excluded.warnings');
    this.#get = db.prepare('SELECT warnings FROM manifest_warnings WHERE path = ?').pluck();
    this.#delete = db.prepare('DELETE FROM manifest_warnings WHERE path = ?');
    this.#all = db.prepare('SELECT path, warnings FROM manifest_warnings');
  }

  /** The warnings of the file at `path` as just scanned (none: its row goes). */
  set(path: string, warnings: readonly Problem[]): void {
    if (warnings.length === 0) this.#delete.run(path);
    else this.#put.run(path, JSON.stringify(warnings.map(formatProblem)));
  }

  get(path: string | null): string[] {
    if (path === null) return [];
    const text = this.#get.get(path) as string | undefined;
    return text ? (JSON.parse(text) as string[]) : [];
  }

  /** path → warnings, for a list of statuses (one query). */
  all(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const r of this.#all.all() as { path: string; warnings: string }[]) out.set(r.path, JSON.parse(r.warnings) as string[]);
    return out;
  }

  delete(path: string): void {
    this.#delete.run(path);
  }
}
