import type { Database, Statement } from 'better-sqlite3';
import type { Clock } from '../types.ts';
import { sha256 } from '../hash.ts';
import { randomToken } from './tokens.ts';
import type { Role } from './users.ts';

/** How long sessions and their tokens live (milliseconds). */
export interface SessionTtls {
  /** Idle lifetime of a session (LASID, RTN): a refresh moves it forward. */
  sessionMs: number;
  /** A session never outlives this from login, however often it is refreshed. */
  absoluteMs: number;
  /** Short-lived access token (ATN). */
  accessMs: number;
}
export const DEFAULT_SESSION_TTLS: SessionTtls = { sessionMs: 8 * 3_600_000, absoluteMs: 7 * 24 * 3_600_000, accessMs: 15 * 60_000 };

/** The plaintext tokens of a session: handed to the browser once, stored only as hashes. */
export interface SessionTokens {
  sessionId: string;
  csrfToken: string;
  accessToken: string;
  refreshToken: string;
  expiresAt: Date;
  accessExpiresAt: Date;
}

/** A live session as the guard sees it. */
export interface SessionRecord {
  sessionHash: string;
  userId: string;
  username: string;
  role: Role;
  csrfHash: string;
  expiresAt: string;
}

interface SessionRow {
  session_hash: string;
  user_id: string;
  csrf_hash: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
  refresh_hash: string;
  prev_refresh_hash: string | null;
  username: string;
  role: Role;
}

/** After a refresh: the same session ID, new everything else. */
export type RotatedTokens = Omit<SessionTokens, 'sessionId'>;

export type RefreshResult = { ok: true; userId: string; tokens: RotatedTokens } | { ok: false; reason: 'unknown' | 'expired' | 'reused' | 'disabled' };

/** Browser sessions (table `sessions`): survive a restart; every token kept as a SHA-256 digest. */
export class SessionStore {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #ttl: SessionTtls;
  /** Prepared once: the guard runs it on every S request. */
  readonly #find: Statement;

  constructor(opts: { db: Database; clock: Clock; ttls?: Partial<SessionTtls> }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#ttl = { ...DEFAULT_SESSION_TTLS, ...opts.ttls };
    this.#find = opts.db.prepare(
      `SELECT s.session_hash, s.user_id, s.csrf_hash, s.expires_at, s.revoked_at, u.username, u.role
       FROM sessions s JOIN users u ON u.user_id = s.user_id WHERE s.session_hash = ?`,
    );
  }

  create(userId: string): SessionTokens {
    const now = this.#clock();
    const t = this.#newTokens(now, new Date(now.getTime() + this.#ttl.sessionMs));
    this.#db
      .prepare(
        `INSERT INTO sessions (session_hash, user_id, csrf_hash, access_hash, access_expires_at, refresh_hash, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(sha256(t.sessionId), userId, sha256(t.csrfToken), sha256(t.accessToken), t.accessExpiresAt.toISOString(), sha256(t.refreshToken), now.toISOString(), t.expiresAt.toISOString());
    this.#purgeExpired(now);
    return t;
  }

  /** The live session for a LASID value, or undefined when unknown, revoked or expired. */
  find(sessionId: string): SessionRecord | undefined {
    const row = this.#find.get(sha256(sessionId)) as SessionRow | undefined;
    if (!row || row.revoked_at !== null || Date.parse(row.expires_at) <= this.#clock().getTime()) return undefined;
    return { sessionHash: row.session_hash, userId: row.user_id, username: row.username, role: row.role, csrfHash: row.csrf_hash, expiresAt: row.expires_at };
  }

  /**
   * Rotates the access, refresh and CSRF tokens and moves the idle expiry forward (capped by the
   * absolute lifetime). The session ID stays. Presenting an already rotated refresh token is
   * treated as theft: the session is revoked.
   */
  refresh(refreshToken: string): RefreshResult {
    const hash = sha256(refreshToken);
    const now = this.#clock();
    return this.#db.transaction((): RefreshResult => {
      const row = this.#db.prepare('SELECT * FROM sessions WHERE refresh_hash = ?').get(hash) as SessionRow | undefined;
      if (!row) {
        const stolen = this.#db.prepare('SELECT session_hash FROM sessions WHERE prev_refresh_hash = ? AND revoked_at IS NULL').get(hash) as
          | { session_hash: string }
          | undefined;
        if (stolen) {
          this.#db.prepare('UPDATE sessions SET revoked_at = ? WHERE session_hash = ?').run(now.toISOString(), stolen.session_hash);
          return { ok: false, reason: 'reused' };
        }
        return { ok: false, reason: 'unknown' };
      }
      if (row.revoked_at !== null || Date.parse(row.expires_at) <= now.getTime()) return { ok: false, reason: 'expired' };
      // A disabled (or deleted) user's sessions end for good, whichever process disabled them.
      const user = this.#db.prepare('SELECT disabled_at FROM users WHERE user_id = ?').get(row.user_id) as { disabled_at: string | null } | undefined;
      if (!user || user.disabled_at !== null) {
        this.#db.prepare('DELETE FROM sessions WHERE user_id = ?').run(row.user_id);
        return { ok: false, reason: 'disabled' };
      }
      const cap = Date.parse(row.created_at) + this.#ttl.absoluteMs;
      const expiresAt = new Date(Math.min(now.getTime() + this.#ttl.sessionMs, cap));
      const t = this.#newTokens(now, expiresAt);
      this.#db
        .prepare(
          `UPDATE sessions SET csrf_hash = ?, access_hash = ?, access_expires_at = ?, prev_refresh_hash = refresh_hash,
             refresh_hash = ?, expires_at = ? WHERE session_hash = ?`,
        )
        .run(sha256(t.csrfToken), sha256(t.accessToken), t.accessExpiresAt.toISOString(), sha256(t.refreshToken), expiresAt.toISOString(), row.session_hash);
      const { sessionId: _unused, ...rotated } = t;
      return { ok: true, userId: row.user_id, tokens: rotated };
    })();
  }

  /** Server-side logout: by LASID, or by RTN when the LASID cookie is gone. */
  revoke(by: { sessionId?: string; refreshToken?: string }): boolean {
    const at = this.#clock().toISOString();
    if (by.sessionId) {
      if (this.#db.prepare('UPDATE sessions SET revoked_at = ? WHERE session_hash = ? AND revoked_at IS NULL').run(at, sha256(by.sessionId)).changes) return true;
    }
    if (by.refreshToken) {
      return this.#db.prepare('UPDATE sessions SET revoked_at = ? WHERE refresh_hash = ? AND revoked_at IS NULL').run(at, sha256(by.refreshToken)).changes > 0;
    }
    return false;
  }

  /** Ends every session of a user (password change, user removed). */
  revokeAllFor(userId: string): number {
    return this.#db.prepare('UPDATE sessions SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL').run(this.#clock().toISOString(), userId).changes;
  }

  #newTokens(now: Date, expiresAt: Date): SessionTokens {
    return {
      sessionId: randomToken(),
      csrfToken: randomToken(),
      accessToken: randomToken(),
      refreshToken: randomToken(),
      expiresAt,
      accessExpiresAt: new Date(Math.min(now.getTime() + this.#ttl.accessMs, expiresAt.getTime())),
    };
  }

  /** Rows a day past their expiry are dropped on login, so the table does not grow without bound. */
  #purgeExpired(now: Date): void {
    this.#db.prepare('DELETE FROM sessions WHERE expires_at < ?').run(new Date(now.getTime() - 86_400_000).toISOString());
  }
}
