import type { Database, Statement } from 'better-sqlite3';
import type { ApiApiKeyInfo } from '../generated/schema-types.ts';
import { IdAllocator } from '../store/ids.ts';
import type { Clock } from '../types.ts';
import { generateApiKey, keyPrefixOf } from './api-key-text.ts';
import { sha256 } from '../hash.ts';
import type { Role } from './users.ts';

/** A key as listed (docs/contract/api.md §2.6): never the secret. */
export type ApiKeyInfo = ApiApiKeyInfo;

/** What authenticating with a key needs to know, joined with its user. */
export interface ApiKeyRecord {
  keyId: string;
  userId: string;
  username: string;
  role: Role;
  clientId: string | null;
  expiresAt: string | null;
  revoked: boolean;
}

interface KeyRow {
  key_id: string;
  user_id: string;
  key_prefix: string;
  label: string;
  client_id: string | null;
  expires_at: string | null;
  last_used_at: string | null;
  created_at: string;
  revoked_at: string | null;
}

const toInfo = (r: KeyRow): ApiKeyInfo => ({
  keyId: r.key_id,
  keyPrefix: r.key_prefix,
  label: r.label,
  clientId: r.client_id,
  expiresAt: r.expires_at,
  lastUsedAt: r.last_used_at,
  revoked: r.revoked_at !== null,
  createdAt: r.created_at,
});

/** API keys (table `api_keys`, IDs `SK####A#####`): only the SHA-256 of a key is stored. */
export class ApiKeyStore {
  readonly #db: Database;
  readonly #clock: Clock;
  readonly #ids: IdAllocator;
  readonly #byHash: Statement;

  constructor(opts: { db: Database; clock: Clock }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#ids = new IdAllocator({ db: opts.db, clock: opts.clock });
    this.#byHash = opts.db.prepare(
      `SELECT k.key_id, k.user_id, k.client_id, k.expires_at, k.revoked_at, u.username, u.role
       FROM api_keys k JOIN users u ON u.user_id = k.user_id WHERE k.key_hash = ?`,
    );
  }

  /** Creates a key acting as `userId`; the plaintext is returned here and never again. */
  create(opts: { userId: string; label: string; clientId?: string; expiresAt?: string; createdBy: string }): ApiKeyInfo & { apiKey: string } {
    const apiKey = generateApiKey();
    const now = this.#clock().toISOString();
    return this.#db.transaction(() => {
      const keyId = this.#ids.next('apiKey');
      this.#db
        .prepare(
          `INSERT INTO api_keys (key_id, user_id, key_hash, key_prefix, label, client_id, expires_at, created_at, created_by)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(keyId, opts.userId, sha256(apiKey), keyPrefixOf(apiKey), opts.label, opts.clientId ?? null, opts.expiresAt ?? null, now, opts.createdBy);
      const info: ApiKeyInfo = {
        keyId,
        keyPrefix: keyPrefixOf(apiKey),
        label: opts.label,
        clientId: opts.clientId ?? null,
        expiresAt: opts.expiresAt ?? null,
        lastUsedAt: null,
        revoked: false,
        createdAt: now,
      };
      return { ...info, apiKey };
    })();
  }

  byHash(keyHash: string): ApiKeyRecord | undefined {
    const row = this.#byHash.get(keyHash) as
      | { key_id: string; user_id: string; client_id: string | null; expires_at: string | null; revoked_at: string | null; username: string; role: Role }
      | undefined;
    if (!row) return undefined;
    return {
      keyId: row.key_id,
      userId: row.user_id,
      username: row.username,
      role: row.role,
      clientId: row.client_id,
      expiresAt: row.expires_at,
      revoked: row.revoked_at !== null,
    };
  }

  get(keyId: string): (ApiKeyInfo & { userId: string }) | undefined {
    const row = this.#db.prepare('SELECT * FROM api_keys WHERE key_id = ?').get(keyId) as KeyRow | undefined;
    return row && { ...toInfo(row), userId: row.user_id };
  }

  listForUser(userId: string): ApiKeyInfo[] {
    return (this.#db.prepare('SELECT * FROM api_keys WHERE user_id = ? ORDER BY key_id').all(userId) as KeyRow[]).map(toInfo);
  }

  /** Soft delete; revoking twice keeps the first time. */
  revoke(keyId: string): void {
    this.#db.prepare('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE key_id = ?').run(this.#clock().toISOString(), keyId);
  }

  /** Writes many `lastUsedAt` values in one transaction (the batched flush). */
  touchMany(lastUsed: Map<string, string>): void {
    if (lastUsed.size === 0) return;
    const stmt = this.#db.prepare('UPDATE api_keys SET last_used_at = MAX(COALESCE(last_used_at, \'\'), ?) WHERE key_id = ?');
    this.#db.transaction(() => {
      for (const [keyId, at] of lastUsed) stmt.run(at, keyId);
    })();
  }
}
