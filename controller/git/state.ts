import type { Store } from '../store/db.ts';

export interface GitStateKey {
  url: string;
  branch: string;
  path: string;
}

/** The last synced revision of one (repository, branch, folder), kept in the store (table `git_state`). */
export class GitStateStore {
  readonly #db: Store;
  readonly #key: GitStateKey;

  constructor(opts: { db: Store; key: GitStateKey }) {
    this.#db = opts.db;
    this.#key = opts.key;
  }

  get(): { revision: string; syncedAt: string } | undefined {
    const row = this.#db
      .prepare('SELECT revision, synced_at FROM git_state WHERE url = ? AND branch = ? AND path = ?')
      .get(this.#key.url, this.#key.branch, this.#key.path) as { revision: string; synced_at: string } | undefined;
    return row ? { revision: row.revision, syncedAt: row.synced_at } : undefined;
  }

  set(revision: string, now: Date): void {
    this.#db
      .prepare(
        `INSERT INTO git_state (url, branch, path, revision, synced_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (url, branch, path) DO UPDATE SET revision = excluded.revision, synced_at = excluded.synced_at`,
      )
      .run(this.#key.url, this.#key.branch, this.#key.path, revision, now.toISOString());
  }
}
