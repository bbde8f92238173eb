import type { Database, Statement } from 'better-sqlite3';
import type { Role } from './users.ts';

/** What a user may do right now: read from the store, never from a key or session record. */
export interface UserRights {
  role: Role;
  /** Clients granted to the user (a member sees only these; an admin sees every client). */
  clients: readonly string[];
}

/**
 * The current rights of users, re-read whenever the `users.generation` counter moved (a trigger
 * bumps it on every change to users or grants, also from another process such as `bictl users`).
 * One primary-key read per request keeps a disabled, demoted or deleted user's keys and sessions
 * from outliving the change, while the key lookup itself stays cached.
 */
export class RightsCache {
  readonly #generation: Statement<[], number>;
  readonly #user: Statement<[string], { role: Role; disabled_at: string | null }>;
  readonly #grants: Statement<[string], { client_id: string }>;
  readonly #cache = new Map<string, UserRights | null>();
  #seen = -1;

  constructor(opts: { db: Database }) {
    // pluck: the bare number, no row object per request.
    this.#generation = opts.db.prepare<[], number>("SELECT value FROM counters WHERE name = 'users.generation'").pluck();
    this.#user = opts.db.prepare('SELECT role, disabled_at FROM users WHERE user_id = ?');
    this.#grants = opts.db.prepare('SELECT client_id FROM user_clients WHERE user_id = ? ORDER BY client_id');
  }

  /** The user's rights, or undefined when the user is disabled or gone. */
  of(userId: string): UserRights | undefined {
    const generation = this.#generation.get() ?? 0;
    if (generation !== this.#seen) {
      this.#cache.clear();
      this.#seen = generation;
    }
    let rights = this.#cache.get(userId);
    if (rights === undefined) {
      const row = this.#user.get(userId);
      rights = row && row.disabled_at === null ? { role: row.role, clients: this.#grants.all(userId).map((g) => g.client_id) } : null;
      if (this.#cache.size >= 10_000) this.#cache.clear();
      this.#cache.set(userId, rights);
    }
    return rights ?? undefined;
  }
}
