import { canonicalJson } from '../audit/canonical.ts';
import { actorOf, appendAudit } from '../audit/log.ts';
import { sha256 } from '../hash.ts';
import type { Database } from 'better-sqlite3';
import { ConflictError, ValidationError } from '../errors.ts';
import { IdAllocator } from '../store/ids.ts';
import type { Clock, Problem } from '../types.ts';
import { hashPassword, type ScryptCost } from './passwords.ts';

export type Role = 'admin' | 'member';

export interface User {
  userId: string;
  username: string;
  role: Role;
  createdAt: string;
}

/** A user as the users API and `bictl users list` show it: with grants and state. */
export interface UserView extends User {
  clients: string[];
  disabled: boolean;
  /** Moves on every change of role, state, grants or password: an edit naming an older one is refused (409). */
  version: number;
  /** The last successful login, or null. */
  lastLoginAt: string | null;
}

interface UserRow {
  user_id: string;
  username: string;
  role: Role;
  password_hash: string;
  created_at: string;
  disabled_at: string | null;
  version: number;
}

export const LAST_ADMIN = 'The last admin cannot be demoted or disabled';
export const LAST_ADMIN_DELETE = 'The last admin cannot be deleted';
const CLIENT_ID = /^[A-Z0-9][A-Z0-9_-]{0,63}$/;

/** Problems with client IDs to grant (uppercased; empty when all are well-formed). */
export function checkClientIds(ids: readonly string[], path = 'clients'): Problem[] {
  return ids.flatMap((id, i) => (CLIENT_ID.test(id) ? [] : [{ path: `${path}/${i}`, message: `${path}/${i} must be 1 to 64 letters, digits, "_" or "-"` }]));
}

const USERNAME = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;
export const MIN_PASSWORD_LENGTH = 8;
const MAX_PASSWORD_LENGTH = 1024;

const toUser = (r: UserRow): User => ({ userId: r.user_id, username: r.username, role: r.role, createdAt: r.created_at });

/** Problems with a new user's name and password (empty when both are acceptable). */
export function checkNewUser(username: string, password: string): Problem[] {
  const problems: Problem[] = [];
  if (!USERNAME.test(username)) {
    problems.push({ path: 'username', message: 'must be 1 to 64 characters of letters, digits, ".", "_", "@" or "-", starting with a letter or digit' });
  }
  if (password.length < MIN_PASSWORD_LENGTH) problems.push({ path: 'password', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` });
  if (password.length > MAX_PASSWORD_LENGTH) problems.push({ path: 'password', message: `must be at most ${MAX_PASSWORD_LENGTH} characters` });
  return problems;
}

/** Users and their scrypt password hashes (table `users`, IDs `U####A#####`). */
export class UserStore {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #ids: IdAllocator;

  constructor(opts: { db: Database; clock: Clock }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#ids = new IdAllocator({ db: opts.db, clock: opts.clock });
  }

  async create(opts: { username: string; password: string; role: Role; cost?: ScryptCost; /** who creates it (a user ID: audit actor `user`); default the controller */ by?: string }): Promise<User> {
    const problems = checkNewUser(opts.username, opts.password);
    if (problems.length) throw new ValidationError(problems);
    if (this.findByName(opts.username)) throw new ConflictError(`User ${opts.username} already exists`);
    const hash = await hashPassword(opts.password, opts.cost);
    const now = this.#clock().toISOString();
    return this.#db.transaction(() => {
      // Checked again inside the transaction: the hash above yielded the event loop.
      if (this.findByName(opts.username)) throw new ConflictError(`User ${opts.username} already exists`);
      const userId = this.#ids.next('user');
      this.#db
        .prepare('INSERT INTO users (user_id, username, password_hash, role, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(userId, opts.username, hash, opts.role, now, now);
      appendAudit(this.#db, { actor: actorOf(opts.by), action: 'user.create', object: { kind: 'User', id: userId }, after: accessDigest(opts.role, null), result: 'ok' }, this.#clock);
      return { userId, username: opts.username, role: opts.role, createdAt: now };
    })();
  }

  get(userId: string): User | undefined {
    const row = this.#db.prepare('SELECT * FROM users WHERE user_id = ?').get(userId) as UserRow | undefined;
    return row && toUser(row);
  }

  findByName(username: string): User | undefined {
    const row = this.#db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
    return row && toUser(row);
  }

  /** The stored hash for a login check (never leaves the auth module). */
  credentials(username: string): { user: User; passwordHash: string; disabled: boolean } | undefined {
    const row = this.#db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
    return row && { user: toUser(row), passwordHash: row.password_hash, disabled: row.disabled_at !== null };
  }

  list(): User[] {
    return (this.#db.prepare('SELECT * FROM users ORDER BY user_id').all() as UserRow[]).map(toUser);
  }

  count(): number {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  }

  /** The user with its grants and state, as the users API shows it. */
  view(userId: string): UserView | undefined {
    const row = this.#db.prepare('SELECT * FROM users WHERE user_id = ?').get(userId) as UserRow | undefined;
    if (!row) return undefined;
    const login = this.#db.prepare('SELECT last_login_at FROM user_logins WHERE user_id = ?').get(userId) as { last_login_at: string } | undefined;
    return { ...toUser(row), clients: this.clientsOf(row.user_id), disabled: row.disabled_at !== null, version: row.version, lastLoginAt: login?.last_login_at ?? null };
  }

  /** Records a successful login (its own table: `users.generation`, and so every rights cache, stays put). */
  recordLogin(userId: string): void {
    this.#db
      .prepare('INSERT INTO user_logins (user_id, last_login_at) VALUES (?, ?) ON CONFLICT (user_id) DO UPDATE SET last_login_at = excluded.last_login_at')
      .run(userId, this.#clock().toISOString());
  }

  /** A change of grants, role, state or password moves the version an edit must name. */
  #bump(userId: string): void {
    this.#db.prepare('UPDATE users SET version = version + 1 WHERE user_id = ?').run(userId);
  }

  /**
   * Sets a new password (an admin's reset, or `bictl`): the user's sessions are deleted, so every
   * browser signed in as them must sign in again with the new one. Audited without the password.
   */
  async setPassword(userId: string, password: string, opts: { cost?: ScryptCost; by?: string } = {}): Promise<void> {
    const problems = checkNewUser('x', password).filter((p) => p.path === 'password');
    if (problems.length) throw new ValidationError(problems);
    const hash = await hashPassword(password, opts.cost);
    this.#db.transaction(() => {
      const changed = this.#db.prepare('UPDATE users SET password_hash = ?, version = version + 1, updated_at = ? WHERE user_id = ?').run(hash, this.#clock().toISOString(), userId);
      if (changed.changes === 0) return;
      this.#db.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId);
      appendAudit(this.#db, { actor: actorOf(opts.by), action: 'user.password', object: { kind: 'User', id: userId }, result: 'ok' }, this.#clock);
    })();
  }

  /**
   * Deletes a user: their sessions, keys and grants go with the row (ON DELETE CASCADE); refuses
   * (ConflictError) to remove the last enabled admin. The audit entry keeps who it was (digest of
   * role and state, as for `user.update`). Callers revoke the keys first (AuthService.deleteUser)
   * so no cached key outlives the user.
   */
  delete(userId: string, by?: string): boolean {
    return this.#db.transaction(() => {
      const row = this.#db.prepare('SELECT * FROM users WHERE user_id = ?').get(userId) as UserRow | undefined;
      if (!row) return false;
      if (row.role === 'admin' && row.disabled_at === null) {
        const others = this.#db.prepare("SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL AND user_id <> ?").get(userId) as { n: number };
        if (others.n === 0) throw new ConflictError(LAST_ADMIN_DELETE);
      }
      this.#db.prepare('DELETE FROM users WHERE user_id = ?').run(userId);
      appendAudit(this.#db, { actor: actorOf(by), action: 'user.delete', object: { kind: 'User', id: userId }, before: accessDigest(row.role, row.disabled_at), result: 'ok' }, this.#clock);
      return true;
    })();
  }

  views(): UserView[] {
    return this.list().map((u) => this.view(u.userId) as UserView);
  }

  /** The clients granted to a member (an admin's grants are kept but an admin sees every client). */
  clientsOf(userId: string): string[] {
    return (this.#db.prepare('SELECT client_id FROM user_clients WHERE user_id = ? ORDER BY client_id').all(userId) as { client_id: string }[]).map((r) => r.client_id);
  }

  grant(userId: string, clientIds: readonly string[], by: string): void {
    const insert = this.#db.prepare('INSERT OR IGNORE INTO user_clients (user_id, client_id, granted_at, granted_by) VALUES (?, ?, ?, ?)');
    const at = this.#clock().toISOString();
    this.#db.transaction(() => {
      for (const id of clientIds) {
        if (insert.run(userId, id, at, by).changes === 0) continue;
        this.#bump(userId);
        appendAudit(this.#db, { actor: actorOf(by), action: 'grant.add', clientId: id, object: { kind: 'User', id: userId }, result: 'ok' }, this.#clock);
      }
    })();
  }

  revokeGrant(userId: string, clientIds: readonly string[], by?: string): void {
    const remove = this.#db.prepare('DELETE FROM user_clients WHERE user_id = ? AND client_id = ?');
    this.#db.transaction(() => {
      for (const id of clientIds) {
        if (remove.run(userId, id).changes === 0) continue;
        this.#bump(userId);
        appendAudit(this.#db, { actor: actorOf(by), action: 'grant.remove', clientId: id, object: { kind: 'User', id: userId }, result: 'ok' }, this.#clock);
      }
    })();
  }

  /** Replaces a user's grants with exactly `clientIds`. */
  setClients(userId: string, clientIds: readonly string[], by: string): void {
    this.#db.transaction(() => {
      const wanted = new Set(clientIds);
      const current = this.clientsOf(userId);
      this.revokeGrant(userId, current.filter((c) => !wanted.has(c)), by);
      this.grant(userId, [...wanted].filter((c) => !current.includes(c)), by);
    })();
  }

  /**
   * Changes role and/or disabled state in one transaction; refuses (ConflictError) to leave no
   * enabled admin. Disabling deletes the user's sessions.
   */
  update(userId: string, change: { role?: Role; disabled?: boolean }, by?: string): void {
    this.#db.transaction(() => {
      const row = this.#db.prepare('SELECT * FROM users WHERE user_id = ?').get(userId) as UserRow | undefined;
      if (!row) return;
      const role = change.role ?? row.role;
      const disabledAt = change.disabled === undefined ? row.disabled_at : change.disabled ? (row.disabled_at ?? this.#clock().toISOString()) : null;
      const wasActiveAdmin = row.role === 'admin' && row.disabled_at === null;
      const staysActiveAdmin = role === 'admin' && disabledAt === null;
      if (wasActiveAdmin && !staysActiveAdmin) {
        const others = this.#db.prepare("SELECT COUNT(*) AS n FROM users WHERE role = 'admin' AND disabled_at IS NULL AND user_id <> ?").get(userId) as { n: number };
        if (others.n === 0) throw new ConflictError(LAST_ADMIN);
      }
      if (role === row.role && disabledAt === row.disabled_at) return;
      this.#db.prepare('UPDATE users SET role = ?, disabled_at = ?, updated_at = ?, version = version + 1 WHERE user_id = ?').run(role, disabledAt, this.#clock().toISOString(), userId);
      // Disabling ends every session for good: re-enabling does not revive one (a new login is needed).
      if (disabledAt !== null && row.disabled_at === null) this.#db.prepare('DELETE FROM sessions WHERE user_id = ?').run(userId);
      appendAudit(
        this.#db,
        { actor: actorOf(by), action: 'user.update', object: { kind: 'User', id: userId }, before: accessDigest(row.role, row.disabled_at), after: accessDigest(role, disabledAt), result: 'ok' },
        this.#clock,
      );
    })();
  }
}

/** An audit entry's `before`/`after` of a user (docs/contract/design.md: digests): SHA-256 of `{disabled, role}`. */
function accessDigest(role: string, disabledAt: string | null): string {
  return sha256(canonicalJson({ disabled: disabledAt !== null, role }));
}
