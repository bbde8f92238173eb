import { randomBytes } from 'node:crypto';
import { systemClock } from '../clock.ts';
import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { Store } from '../store/db.ts';
import type { Clock } from '../types.ts';
import { deriveKey, keyId, open, seal } from './cipher.ts';
import { secretTarget, targetDifferences, type SecretTarget } from './target.ts';

/** A target as recorded: a SecretTarget, or (migrated from a connection row) its stored columns. */
type StoredTarget = SecretTarget | { vendor: 'SNOWFLAKE' | 'POSTGRESQL'; accountUrl?: string | null; database?: string | null; username?: string | null; migrated: true };

function storedTarget(t: StoredTarget): SecretTarget {
  if (!('migrated' in t)) return t;
  return secretTarget({ vendor: t.vendor, accountUrl: t.accountUrl ?? undefined, database: t.database ?? undefined, username: t.username ?? undefined });
}

export const SECRET_REF_PREFIX = 'secret:';
const SECRET_ID = /^[A-Za-z0-9_-]{1,64}$/;
const MAX_SECRET_BYTES = 16 * 1024;

export const SECRETS_DISABLED_MESSAGE =
  'BI_SECRET_KEY is not set: the controller refuses to store credentials. Set BI_SECRET_KEY (e.g. openssl rand -hex 32) and restart, or reference the password with passwordEnv in a Connection manifest';

export interface SecretStoreOptions {
  db: Store;
  /** BI_SECRET_KEY; without it nothing can be stored or read. */
  secretKey: string | undefined;
  clock?: Clock;
  /** New secret IDs (tests inject a sequence). */
  newId?: () => string;
}

export interface PutOptions {
  /** Where this secret may be sent (host, port, database, user); checked before every use. */
  target: SecretTarget;
  label?: string;
  createdBy?: string;
  /** Replace the value of an existing secret (the wizard retried with a new password). */
  secretId?: string;
}

interface Row {
  secret_id: string;
  iv: string;
  ciphertext: string;
  tag: string;
  key_id: string;
}

/** `secret:<id>` → `<id>`; undefined when `ref` is not a secret reference. */
export function parseSecretRef(ref: string): string | undefined {
  if (!ref.startsWith(SECRET_REF_PREFIX)) return undefined;
  const id = ref.slice(SECRET_REF_PREFIX.length);
  return SECRET_ID.test(id) ? id : undefined;
}

/**
 * Credentials encrypted at rest (AES-256-GCM, key from BI_SECRET_KEY), referenced from
 * manifests as `secret:<id>`. Refuses to store anything when no key is configured.
 */
export class SecretStore {
  readonly #db: Store;
  readonly #key: Buffer | undefined;
  readonly #keyId: string | undefined;
  readonly #problem: string | undefined;
  readonly #clock: Clock;
  readonly #newId: () => string;

  constructor(opts: SecretStoreOptions) {
    this.#db = opts.db;
    this.#clock = opts.clock ?? systemClock;
    this.#newId = opts.newId ?? (() => randomBytes(12).toString('base64url'));
    if (!opts.secretKey) {
      this.#problem = SECRETS_DISABLED_MESSAGE;
    } else {
      try {
        this.#key = deriveKey(opts.secretKey);
        this.#keyId = keyId(this.#key);
      } catch (err) {
        this.#problem = (err as Error).message;
      }
    }
  }

  /** Whether secrets can be stored; `problem` says why not. */
  get available(): boolean {
    return this.#key !== undefined;
  }

  get problem(): string | undefined {
    return this.#problem;
  }

  /** Encrypts and stores `plaintext`; returns its ID and the `secret:<id>` reference for a manifest. */
  put(plaintext: string, opts: PutOptions): { secretId: string; secretRef: string } {
    const key = this.#requireKey();
    if (typeof plaintext !== 'string' || plaintext.length === 0) throw new ValidationError([{ path: 'password', message: 'password must not be empty' }]);
    if (Buffer.byteLength(plaintext, 'utf8') > MAX_SECRET_BYTES) {
      throw new ValidationError([{ path: 'password', message: `password must be at most ${MAX_SECRET_BYTES} bytes` }]);
    }
    const secretId = opts.secretId ?? this.#newId();
    if (!SECRET_ID.test(secretId)) throw new ValidationError([{ path: 'secretId', message: 'secretId must match [A-Za-z0-9_-]{1,64}' }]);
    const sealed = seal(key, plaintext, secretId);
    const at = this.#clock().toISOString();
    this.#db
      .prepare(
        `INSERT INTO secrets (secret_id, label, iv, ciphertext, tag, key_id, target, created_by, created_at, updated_at)
         VALUES (@id, @label, @iv, @ciphertext, @tag, @keyId, @target, @by, @at, @at)
         ON CONFLICT (secret_id) DO UPDATE SET iv = @iv, ciphertext = @ciphertext, tag = @tag, key_id = @keyId,
           target = @target, label = @label, updated_at = @at`,
      )
      .run({ id: secretId, label: opts.label ?? '', ...sealed, keyId: this.#keyId, target: JSON.stringify(opts.target), by: opts.createdBy ?? null, at });
    return { secretId, secretRef: `${SECRET_REF_PREFIX}${secretId}` };
  }

  /** Decrypts a secret by ID or by `secret:<id>` reference. */
  reveal(idOrRef: string): string {
    const key = this.#requireKey();
    const id = parseSecretRef(idOrRef) ?? idOrRef;
    const row = this.#db.prepare('SELECT secret_id, iv, ciphertext, tag, key_id FROM secrets WHERE secret_id = ?').get(id) as Row | undefined;
    if (!row) throw new NotFoundError(`Secret ${id} not found`);
    if (row.key_id !== this.#keyId) throw new ConflictError(`Secret ${id} was encrypted with a different BI_SECRET_KEY`);
    try {
      return open(key, row, row.secret_id);
    } catch {
      throw new ConflictError(`Secret ${id} could not be decrypted: the stored value was altered`);
    }
  }

  /**
   * Why the secret may not be sent to `target`, or undefined when it may: it was stored for
   * another host, port, database or user (or, stored before targets were recorded and claimed
   * by no connection, for none known).
   */
  refusal(idOrRef: string, target: SecretTarget): string | undefined {
    const id = parseSecretRef(idOrRef) ?? idOrRef;
    const row = this.#db.prepare('SELECT target FROM secrets WHERE secret_id = ?').get(id) as { target: string | null } | undefined;
    if (!row) return `secretRef secret:${id} does not exist`;
    if (!row.target) return `secretRef secret:${id} has no recorded target; save the connection again with its password`;
    const stored = JSON.parse(row.target) as StoredTarget;
    const differ = targetDifferences(storedTarget(stored), target);
    if (!differ.length) return undefined;
    return `secretRef secret:${id} was stored for another target (${differ.join(', ')} differ${differ.length === 1 ? 's' : ''}); type the password to use it here`;
  }

  has(idOrRef: string): boolean {
    const id = parseSecretRef(idOrRef) ?? idOrRef;
    return this.#db.prepare('SELECT 1 FROM secrets WHERE secret_id = ?').get(id) !== undefined;
  }

  remove(idOrRef: string): boolean {
    const id = parseSecretRef(idOrRef) ?? idOrRef;
    return this.#db.prepare('DELETE FROM secrets WHERE secret_id = ?').run(id).changes > 0;
  }

  #requireKey(): Buffer {
    if (!this.#key) throw new ConflictError(this.#problem ?? SECRETS_DISABLED_MESSAGE);
    return this.#key;
  }
}
