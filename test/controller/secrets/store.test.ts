import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deriveKey, keyId, open, seal } from '../../../controller/secrets/cipher.ts';
import { parseSecretRef, SecretStore, SECRETS_DISABLED_MESSAGE } from '../../../controller/secrets/store.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../../controller/errors.ts';
import Database from 'better-sqlite3';
import { MIGRATIONS_DIR, openStore, type Store } from '../../../controller/store/db.ts';
import { migrate, readMigrations } from '../../../controller/store/migrate.ts';
import { secretTarget } from '../../../controller/secrets/target.ts';

const HEX = 'a'.repeat(64);
const OTHER = 'b'.repeat(64);
const PG = secretTarget({ vendor: 'POSTGRESQL', host: 'db.internal', port: 5432, database: 'sales', username: 'bi' });

describe('cipher', () => {
  it('takes 64 hex characters and base64 of 32 bytes as the key itself', () => {
    expect(deriveKey(HEX)).toEqual(Buffer.alloc(32, 0xaa));
    const raw = Buffer.alloc(32, 7);
    expect(deriveKey(raw.toString('base64'))).toEqual(raw);
  });

  it('stretches a passphrase with scrypt, deterministically, and refuses a short one', () => {
    const a = deriveKey('correct horse battery staple');
    expect(a).toHaveLength(32);
    expect(deriveKey('correct horse battery staple')).toEqual(a);
    expect(deriveKey('correct horse battery stapler')).not.toEqual(a);
    expect(() => deriveKey('short')).toThrow(/BI_SECRET_KEY is too short/);
  });

  it('seals with a fresh nonce each time and opens only with the same key and AAD', () => {
    const key = deriveKey(HEX);
    const a = seal(key, 'p@ss', 'id1');
    const b = seal(key, 'p@ss', 'id1');
    expect(a.iv).not.toBe(b.iv);
    expect(a.ciphertext).not.toBe(b.ciphertext);
    expect(open(key, a, 'id1')).toBe('p@ss');
    expect(() => open(key, a, 'id2')).toThrow();
    expect(() => open(deriveKey(OTHER), a, 'id1')).toThrow();
    expect(keyId(key)).toMatch(/^[0-9a-f]{16}$/);
    expect(keyId(key)).not.toBe(keyId(deriveKey(OTHER)));
  });
});

describe('SecretStore', () => {
  let dir: string;
  let db: Store;
  let n: number;
  const store = (secretKey: string | undefined) =>
    new SecretStore({ db, secretKey, clock: () => new Date('2026-03-01T10:00:00Z'), newId: () => `s${++n}` });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-secrets-'));
    db = openStore(join(dir, 'bi.sqlite'));
    n = 0;
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stores a secret encrypted and reveals it by ID or by reference', () => {
    const s = store(HEX);
    expect(s.available).toBe(true);
    expect(s.put('hunter2-secret', { target: PG, label: 'Connection/D2026A00009', createdBy: 'U2026A00001' })).toEqual({ secretId: 's1', secretRef: 'secret:s1' });
    expect(s.reveal('s1')).toBe('hunter2-secret');
    expect(s.reveal('secret:s1')).toBe('hunter2-secret');
    const row = db.prepare('SELECT * FROM secrets').get() as Record<string, string>;
    expect(row).toMatchObject({ secret_id: 's1', label: 'Connection/D2026A00009', created_by: 'U2026A00001', created_at: '2026-03-01T10:00:00.000Z' });
    expect(JSON.stringify(row)).not.toContain('hunter2');
    expect(Buffer.from(row.ciphertext, 'base64').toString('utf8')).not.toContain('hunter2');
  });

  it('refuses to store or read anything without BI_SECRET_KEY, with a message that says what to do', () => {
    const s = store(undefined);
    expect(s.available).toBe(false);
    expect(s.problem).toBe(SECRETS_DISABLED_MESSAGE);
    expect(() => s.put('x', { target: PG })).toThrow(ConflictError);
    expect(() => s.put('x', { target: PG })).toThrow(/BI_SECRET_KEY is not set/);
    expect(db.prepare('SELECT COUNT(*) AS n FROM secrets').get()).toEqual({ n: 0 });
    expect(store('tiny').problem).toMatch(/too short/);
  });

  it('survives a restart with the same key and reports a changed key as such', () => {
    store(HEX).put('pw-1', { target: PG });
    expect(store(HEX).reveal('s1')).toBe('pw-1');
    expect(() => store(OTHER).reveal('s1')).toThrow('Secret s1 was encrypted with a different BI_SECRET_KEY');
  });

  it('detects a tampered value and a value moved to another row', () => {
    const s = store(HEX);
    s.put('pw-1', { target: PG });
    s.put('pw-2', { target: PG });
    const row = db.prepare('SELECT ciphertext FROM secrets WHERE secret_id = ?').get('s1') as { ciphertext: string };
    const bytes = Buffer.from(row.ciphertext, 'base64');
    bytes[0] ^= 1;
    db.prepare('UPDATE secrets SET ciphertext = ? WHERE secret_id = ?').run(bytes.toString('base64'), 's1');
    expect(() => s.reveal('s1')).toThrow('Secret s1 could not be decrypted: the stored value was altered');
    db.prepare("UPDATE secrets SET (iv, ciphertext, tag) = (SELECT iv, ciphertext, tag FROM secrets WHERE secret_id = 's2') WHERE secret_id = 's1'").run();
    expect(() => s.reveal('s1')).toThrow(/altered/);
  });

  it('replaces the value of an existing secret in place, and removes it', () => {
    const s = store(HEX);
    s.put('old', { target: PG });
    expect(s.put('new', { target: PG, secretId: 's1' })).toEqual({ secretId: 's1', secretRef: 'secret:s1' });
    expect(s.reveal('s1')).toBe('new');
    expect(db.prepare('SELECT COUNT(*) AS n FROM secrets').get()).toEqual({ n: 1 });
    expect(s.remove('secret:s1')).toBe(true);
    expect(() => s.reveal('s1')).toThrow(NotFoundError);
  });

  it('validates what it stores', () => {
    const s = store(HEX);
    expect(() => s.put('', { target: PG })).toThrow(ValidationError);
    expect(() => s.put('x'.repeat(16 * 1024 + 1), { target: PG })).toThrow('password must be at most 16384 bytes');
    expect(() => s.put('x', { target: PG, secretId: '../etc' })).toThrow(ValidationError);
  });

  it('parses secret references', () => {
    expect(parseSecretRef('secret:abc_D-1')).toBe('abc_D-1');
    expect(parseSecretRef('secret:')).toBeUndefined();
    expect(parseSecretRef('secret:a/b')).toBeUndefined();
    expect(parseSecretRef('env:X')).toBeUndefined();
  });
});

describe('secret targets', () => {
  let dir: string;
  let db: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-secret-target-'));
    db = openStore(join(dir, 'bi.sqlite'));
  });
  afterEach(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a secret may go only to the host, port, database and user it was stored for', () => {
    const s = new SecretStore({ db, secretKey: HEX, newId: () => 's1' });
    s.put('pw', { target: PG });
    expect(s.refusal('secret:s1', PG)).toBeUndefined();
    expect(s.refusal('secret:s1', secretTarget({ vendor: 'POSTGRESQL', accountUrl: 'postgresql://DB.internal:5432', database: 'sales', username: 'bi' }))).toBeUndefined();
    expect(s.refusal('secret:s1', secretTarget({ vendor: 'POSTGRESQL', host: 'evil.example', database: 'sales', username: 'bi' }))).toBe(
      'secretRef secret:s1 was stored for another target (host differs); type the password to use it here',
    );
    expect(s.refusal('secret:s1', secretTarget({ vendor: 'SNOWFLAKE', accountUrl: 'https://db.internal', database: 'sales', username: 'bi' }))).toBe(
      'secretRef secret:s1 was stored for another target (vendor, port differ); type the password to use it here',
    );
    expect(s.refusal('secret:nope', PG)).toBe('secretRef secret:nope does not exist');
  });

  it('migration 0010 gives secrets stored before it the target of the connection that references them; others none', () => {
    const old = new Database(join(dir, 'old.sqlite'));
    migrate(old, readMigrations(MIGRATIONS_DIR).filter((m) => m.version < 10));
    const sealed = seal(deriveKey(HEX), 'pw', 'used');
    const orphan = seal(deriveKey(HEX), 'pw', 'orphan');
    const insert = old.prepare(`INSERT INTO secrets (secret_id, iv, ciphertext, tag, key_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'x', 'x')`);
    insert.run('used', sealed.iv, sealed.ciphertext, sealed.tag, keyId(deriveKey(HEX)));
    insert.run('orphan', orphan.iv, orphan.ciphertext, orphan.tag, keyId(deriveKey(HEX)));
    old
      .prepare(`INSERT INTO connections (connection_id, vendor, account_url, database_name, username, secret_ref, created_at, updated_at) VALUES ('D2026A00001', 'POSTGRESQL', 'postgresql://db.internal:5432', 'sales', 'bi', 'secret:used', 'x', 'x')`)
      .run();
    migrate(old, readMigrations(MIGRATIONS_DIR));
    const s = new SecretStore({ db: old as unknown as Store, secretKey: HEX });
    expect(s.refusal('secret:used', PG)).toBeUndefined();
    expect(s.refusal('secret:used', { ...PG, username: 'other' })).toContain('username differs');
    expect(s.refusal('secret:orphan', PG)).toBe('secretRef secret:orphan has no recorded target; save the connection again with its password');
    old.close();
  });
});
