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

interface UserRow {
  user_id: string;
  username: string;
  role: Role;
  password_hash: string;
  created_at: string;
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

  async create(opts: { username: string; password: string; role: Role; cost?: ScryptCost }): Promise<User> {
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
  credentials(username: string): { user: User; passwordHash: string } | undefined {
    const row = this.#db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
    return row && { user: toUser(row), passwordHash: row.password_hash };
  }

  list(): User[] {
    return (this.#db.prepare('SELECT * FROM users ORDER BY user_id').all() as UserRow[]).map(toUser);
  }

  count(): number {
    return (this.#db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  }
}
