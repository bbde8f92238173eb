import { actorOf, appendAudit } from '../audit/log.ts';
import { availableParallelism } from 'node:os';
import type { Database } from 'better-sqlite3';
import { realScheduler, type Cancel, type Scheduler } from '../clock.ts';
import type { AuthConfig } from '../config.ts';
import { ConflictError } from '../errors.ts';
import { silentLogger, type Logger } from '../log.ts';
import type { Clock } from '../types.ts';
import { isWellFormedApiKey } from './api-key-text.ts';
import { ApiKeyStore, type ApiKeyInfo, type ApiKeyRecord } from './api-keys.ts';
import { hashPassword, verifyPassword, type ScryptCost } from './passwords.ts';
import { Semaphore } from '../semaphore.ts';
import { TokenBuckets, WindowCounter } from './rate-limit.ts';
import { sha256 } from '../hash.ts';
import { SessionStore, type SessionTokens, type SessionTtls } from './sessions.ts';
import { UserStore, type User } from './users.ts';
import { RightsCache } from './rights.ts';

export interface LoginLimits {
  /** Failed logins allowed per username per window. */
  perUsername: number;
  /** Failed logins allowed per client IP per window. */
  perIp: number;
  windowMs: number;
  /** Password hashes (scrypt) running at once (default: a quarter of the cores, at least 1); the rest wait in a queue. */
  concurrentHashes?: number;
  /** Logins waiting for a hash slot (default 32); one more is refused at once (503). */
  queuedHashes?: number;
  /**
   * A hash slot rests this many times as long as its hash took before the next hash (default 1:
   * a slot burns at most half a core), so a login storm leaves CPU time to everything else.
   */
  hashRest?: number;
}

export interface AuthSettings {
  /** Requests per second per API key (token bucket, burst = one second's worth); 0 = no limit. */
  keyRateLimit: number;
  /** How long a key lookup is trusted from memory (a revoke in this process drops it at once). */
  keyCacheTtlMs: number;
  /** `lastUsedAt` values are written at most this often, in one transaction. */
  lastUsedFlushMs: number;
  login: LoginLimits;
  sessionTtls: Partial<SessionTtls>;
  passwordCost?: ScryptCost;
}

export const DEFAULT_AUTH_SETTINGS: AuthSettings = {
  keyRateLimit: 5000,
  keyCacheTtlMs: 30_000,
  lastUsedFlushMs: 1000,
  login: { perUsername: 10, perIp: 50, windowMs: 15 * 60_000 },
  sessionTtls: {},
};

/** The settings the configuration asks for (config.ts reads them from the environment). */
export function authSettingsOf(config: AuthConfig): Partial<AuthSettings> {
  const out: Partial<AuthSettings> = {};
  if (config.keyRateLimit !== undefined) out.keyRateLimit = config.keyRateLimit;
  if (config.loginMaxFailures !== undefined) {
    out.login = { ...DEFAULT_AUTH_SETTINGS.login, perUsername: config.loginMaxFailures, perIp: config.loginMaxFailures * 5 };
  }
  const ttls: Partial<SessionTtls> = {};
  if (config.sessionMs !== undefined) ttls.sessionMs = config.sessionMs;
  if (config.absoluteMs !== undefined) ttls.absoluteMs = config.absoluteMs;
  if (Object.keys(ttls).length) out.sessionTtls = ttls;
  return out;
}

/**
 * scrypt is CPU-bound (~50 ms of a core each): a quarter of the cores, at least one, so a
 * login storm leaves cores for the event loop and libuv's file and store work.
 */
export function defaultHashSlots(): number {
  return Math.max(1, Math.floor(availableParallelism() / 4));
}

export type KeyCheck =
  | { ok: true; key: ApiKeyRecord }
  | { ok: false; status: 401; error: 'API key required' | 'Invalid API key' | 'API key expired' }
  | { ok: false; status: 429; error: 'Rate limit exceeded'; retryAfterSeconds: number };

export type LoginResult =
  | { ok: true; user: User; tokens: SessionTokens }
  | { ok: false; status: 401 }
  | { ok: false; status: 429; retryAfterSeconds: number }
  | { ok: false; status: 503; retryAfterSeconds: number };

interface CachedKey {
  key: ApiKeyRecord;
  expiresAtMs: number | null;
  cachedAt: number;
}

const MAX_CACHED_KEYS = 10_000;

/**
 * Everything authentication keeps in memory around the store: the key-lookup cache, the
 * batched `lastUsedAt` writes, the rate limiters, and the dummy hash that makes an unknown
 * user cost as much as a wrong password.
 */
export class AuthService {
  readonly users: UserStore;
  readonly keys: ApiKeyStore;
  readonly sessions: SessionStore;
  /** Users' current role, grants and state, checked on every request (the key cache does not hold them). */
  readonly rights: RightsCache;
  readonly settings: AuthSettings;
  readonly #clock: Clock;
  readonly #db: Database;
  readonly #scheduler: Scheduler;
  readonly #log: Logger;
  readonly #cache = new Map<string, CachedKey>();
  readonly #hashByKeyId = new Map<string, string>();
  readonly #pendingLastUsed = new Map<string, string>();
  #flushTimer: Cancel | undefined;
  readonly #keyLimiter: TokenBuckets;
  readonly #loginByIp: WindowCounter;
  readonly #loginByName: WindowCounter;
  readonly #hashSlots: Semaphore;
  #dummyHash: Promise<string> | undefined;
  #closed = false;

  readonly #verify: typeof verifyPassword;

  constructor(opts: {
    db: Database;
    clock: Clock;
    scheduler?: Scheduler;
    log?: Logger;
    settings?: Partial<AuthSettings>;
    /** The password check (a seam for tests that watch the unknown-user path hash too). */
    verify?: typeof verifyPassword;
  }) {
    this.#verify = opts.verify ?? verifyPassword;
    this.#clock = opts.clock;
    this.#db = opts.db;
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.#log = opts.log ?? silentLogger();
    this.settings = { ...DEFAULT_AUTH_SETTINGS, ...opts.settings };
    this.users = new UserStore({ db: opts.db, clock: opts.clock });
    this.keys = new ApiKeyStore({ db: opts.db, clock: opts.clock });
    this.sessions = new SessionStore({ db: opts.db, clock: opts.clock, ttls: this.settings.sessionTtls });
    this.rights = new RightsCache({ db: opts.db });
    this.#keyLimiter = new TokenBuckets({ ratePerSecond: this.settings.keyRateLimit, clock: opts.clock });
    const { login } = this.settings;
    this.#loginByIp = new WindowCounter({ limit: login.perIp, windowMs: login.windowMs, clock: opts.clock });
    this.#loginByName = new WindowCounter({ limit: login.perUsername, windowMs: login.windowMs, clock: opts.clock });
    this.#hashSlots = new Semaphore({ limit: login.concurrentHashes ?? defaultHashSlots(), maxQueue: login.queuedHashes ?? 32 });
  }

  // ---- API keys -------------------------------------------------------------------------

  /** Authenticates a presented key: shape and checksum first, then the cache, then the store. */
  authenticateKey(presented: string | undefined): KeyCheck {
    if (!presented) return { ok: false, status: 401, error: 'API key required' };
    if (!isWellFormedApiKey(presented)) return { ok: false, status: 401, error: 'Invalid API key' };
    const now = this.#clock().getTime();
    const hash = sha256(presented);
    let cached = this.#cache.get(hash);
    if (!cached || now - cached.cachedAt > this.settings.keyCacheTtlMs) {
      const key = this.keys.byHash(hash);
      if (!key || key.revoked) {
        this.#forget(hash);
        return { ok: false, status: 401, error: 'Invalid API key' };
      }
      cached = { key, expiresAtMs: key.expiresAt ? Date.parse(key.expiresAt) : null, cachedAt: now };
      if (this.#cache.size >= MAX_CACHED_KEYS) this.#evictOldest();
      this.#cache.set(hash, cached);
      this.#hashByKeyId.set(key.keyId, hash);
    }
    if (cached.expiresAtMs !== null && cached.expiresAtMs <= now) return { ok: false, status: 401, error: 'API key expired' };
    const admission = this.#keyLimiter.take(cached.key.keyId);
    if (!admission.ok) return { ok: false, status: 429, error: 'Rate limit exceeded', retryAfterSeconds: admission.retryAfterSeconds };
    this.#markUsed(cached.key.keyId, new Date(now).toISOString());
    return { ok: true, key: cached.key };
  }

  createKey(opts: { userId: string; label: string; clientId?: string; expiresAt?: string; createdBy: string }): ApiKeyInfo & { apiKey: string } {
    const key = this.keys.create(opts);
    appendAudit(
      this.#db,
      { actor: actorOf(opts.createdBy), action: 'key.create', ...(opts.clientId ? { clientId: opts.clientId } : {}), object: { kind: 'ApiKey', id: key.keyId }, result: 'ok' },
      this.#clock,
    );
    return key;
  }

  /** Soft-deletes the key and drops its cache entry, so the very next request with it fails. */
  revokeKey(keyId: string, by?: string): void {
    const clientId = this.keys.get(keyId)?.clientId;
    this.keys.revoke(keyId);
    appendAudit(
      this.#db,
      { actor: actorOf(by), action: 'key.revoke', ...(clientId ? { clientId } : {}), object: { kind: 'ApiKey', id: keyId }, result: 'ok' },
      this.#clock,
    );
    const hash = this.#hashByKeyId.get(keyId);
    if (hash) this.#forget(hash);
    this.#keyLimiter.forget(keyId);
    // Its last use is history worth keeping: write it now rather than drop it.
    const lastUsed = this.#pendingLastUsed.get(keyId);
    if (lastUsed) {
      this.#pendingLastUsed.delete(keyId);
      this.keys.touchMany(new Map([[keyId, lastUsed]]));
    }
  }

  /** A user's keys, with `lastUsedAt` values not yet flushed to the store. */
  listKeys(userId: string): ApiKeyInfo[] {
    return this.keys.listForUser(userId).map((k) => {
      const pending = this.#pendingLastUsed.get(k.keyId);
      return pending && (!k.lastUsedAt || pending > k.lastUsedAt) ? { ...k, lastUsedAt: pending } : k;
    });
  }

  /** Every user's keys with their owner (an admin's view of all keys), newest user last. */
  listAllKeys(): (ApiKeyInfo & { userId: string; username: string })[] {
    const names = new Map(this.users.list().map((u) => [u.userId, u.username]));
    return [...names.keys()].flatMap((userId) => this.listKeys(userId).map((k) => ({ ...k, userId, username: names.get(userId) as string })));
  }

  /**
   * Deletes a user (docs/access.md): every key of theirs still working is revoked first (audited,
   * dropped from the key cache at once), then the user row goes with its sessions and grants.
   */
  deleteUser(userId: string, by?: string): boolean {
    if (!this.users.get(userId)) return false;
    // One transaction: a refused delete (the last admin) revokes nothing.
    return this.#db.transaction(() => {
      for (const k of this.keys.listForUser(userId)) if (!k.revoked) this.revokeKey(k.keyId, by);
      return this.users.delete(userId, by);
    })();
  }

  /** Writes pending `lastUsedAt` values (timer, shutdown, or a test). */
  flushLastUsed(): void {
    this.#flushTimer?.();
    this.#flushTimer = undefined;
    if (this.#pendingLastUsed.size === 0) return;
    const batch = new Map(this.#pendingLastUsed);
    this.#pendingLastUsed.clear();
    try {
      this.keys.touchMany(batch);
    } catch (err) {
      this.#log.error({ err: (err as Error).message, keys: batch.size }, 'lastUsedAt flush failed');
    }
  }

  #markUsed(keyId: string, at: string): void {
    this.#pendingLastUsed.set(keyId, at);
    if (this.#flushTimer || this.#closed) return;
    this.#flushTimer = this.#scheduler(() => {
      this.#flushTimer = undefined;
      this.flushLastUsed();
    }, this.settings.lastUsedFlushMs);
  }

  #forget(hash: string): void {
    const entry = this.#cache.get(hash);
    if (entry) this.#hashByKeyId.delete(entry.key.keyId);
    this.#cache.delete(hash);
  }

  #evictOldest(): void {
    const oldest = this.#cache.keys().next();
    if (!oldest.done) this.#forget(oldest.value);
  }

  /** A refused login (wrong credentials, or past the limits): audited, never with the password. */
  #audit(action: 'login.failed' | 'login.lockout', username: string): void {
    try {
      appendAudit(this.#db, { actor: { type: 'user', id: username.slice(0, 200) }, action, object: { kind: 'User', id: username.slice(0, 200) }, result: 'refused' }, this.#clock);
    } catch (err) {
      this.#log.error({ err: (err as Error).message }, 'audit entry of a login not written');
    }
  }

  // ---- users and sessions -----------------------------------------------------------------

  /**
   * Checks a username and password and opens a session. An unknown user is checked against a
   * dummy hash, so both failures cost the same and answer the same.
   */
  async login(username: string, password: string, ip: string): Promise<LoginResult> {
    if (!this.#hashSlots.hasRoom) return { ok: false, status: 503, retryAfterSeconds: 1 };
    const nameKey = username.toLowerCase();
    // The attempt counts as a failure before the password is checked, so a burst in flight is
    // limited exactly like a sequence; a success hands its reservation back.
    const byIp = this.#loginByIp.reserve(ip);
    const byName = byIp.ok ? this.#loginByName.reserve(nameKey) : byIp;
    if (!byIp.ok || !byName.ok) {
      if (byIp.ok) this.#loginByIp.release(ip);
      this.#audit('login.lockout', username);
      const refused = [byIp, byName].map((a) => (a.ok ? 0 : a.retryAfterSeconds));
      return { ok: false, status: 429, retryAfterSeconds: Math.max(...refused) };
    }
    // The answer goes out as soon as the hash is done; the slot is freed only after its rest.
    let answer: (user: User | undefined) => void = () => {};
    let fail: (err: unknown) => void = () => {};
    const checked = new Promise<User | undefined>((resolve, reject) => {
      answer = resolve;
      fail = reject;
    });
    const slot = this.#hashSlots.tryRun(async () => {
      try {
        const cred = this.users.credentials(username);
        const hash = cred?.passwordHash ?? (await this.#dummy());
        const started = performance.now();
        const matches = await this.#verify(password, hash);
        // A disabled user fails like a wrong password (after the same hash work).
        answer(cred && matches && !cred.disabled ? cred.user : undefined);
        const rest = (performance.now() - started) * (this.settings.login.hashRest ?? 1);
        if (rest > 0) await new Promise<void>((resolve) => this.#scheduler(resolve, rest));
      } catch (err) {
        fail(err);
      }
    });
    if (!slot) {
      this.#loginByIp.release(ip);
      this.#loginByName.release(nameKey);
      return { ok: false, status: 503, retryAfterSeconds: 1 };
    }
    const user = await checked;
    if (!user) {
      this.#audit('login.failed', username);
      return { ok: false, status: 401 };
    }
    this.#loginByIp.release(ip);
    this.#loginByName.reset(nameKey);
    const tokens = this.sessions.create(user.userId);
    this.users.recordLogin(user.userId);
    return { ok: true, user, tokens };
  }

  /** Creates the first admin from BI_ADMIN_USER / BI_ADMIN_PASSWORD when that user is absent. */
  async ensureAdmin(username: string, password: string): Promise<User | undefined> {
    if (this.users.findByName(username)) return undefined;
    try {
      return await this.users.create({ username, password, role: 'admin', cost: this.settings.passwordCost });
    } catch (err) {
      if (err instanceof ConflictError) return undefined;
      throw new Error(`BI_ADMIN_USER / BI_ADMIN_PASSWORD: ${(err as Error).message}`);
    }
  }

  /** Computes the dummy hash ahead of the first login (server start), so even that one is not faster. */
  async warmUp(): Promise<void> {
    await this.#dummy();
  }

  #dummy(): Promise<string> {
    return (this.#dummyHash ??= hashPassword(sha256(String(Math.random())), this.settings.passwordCost));
  }

  /** Flushes `lastUsedAt` and stops scheduling (runtime shutdown). */
  close(): void {
    this.#closed = true;
    this.flushLastUsed();
  }
}
