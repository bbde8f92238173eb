import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS_DIR, openStore } from '../../../controller/store/db.ts';
import { IdAllocator, isIdOf } from '../../../controller/store/ids.ts';
import { migrate, readMigrations } from '../../../controller/store/migrate.ts';
import { FakeClock } from '../../helpers/clock.ts';

describe('migrations', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-store-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('applies every migration to an empty DB, in order, once', () => {
    const db = new Database(join(dir, 'a.sqlite'));
    const all = readMigrations(MIGRATIONS_DIR);
    expect(migrate(db, all)).toEqual(all.map((m) => m.version));
    expect(migrate(db, all)).toEqual([]);
    const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((r) => r.name);
    expect(tables).toEqual(expect.arrayContaining(['manifests', 'clients', 'vdms', 'facades', 'pipelines', 'schema_migrations']));
    db.close();
  });

  it('applies only the new migrations to an existing DB and keeps its rows', () => {
    const db = new Database(join(dir, 'b.sqlite'));
    const [first] = readMigrations(MIGRATIONS_DIR);
    migrate(db, [first]);
    db.prepare("INSERT INTO counters (name, value) VALUES ('x', 7)").run();
    const extra = { version: 9999, name: 'test_extra', sql: 'CREATE TABLE extra (id INTEGER PRIMARY KEY);' };
    expect(migrate(db, [first, extra])).toEqual([9999]);
    expect(db.prepare("SELECT value FROM counters WHERE name = 'x'").get()).toEqual({ value: 7 });
    db.close();
  });

  it('rolls a failing migration back whole', () => {
    const db = new Database(join(dir, 'c.sqlite'));
    const bad = { version: 1, name: 'bad', sql: 'CREATE TABLE t1 (a INT); CREATE TABLE t1 (a INT);' };
    expect(() => migrate(db, [bad])).toThrow();
    expect(db.prepare("SELECT COUNT(*) AS n FROM sqlite_master WHERE name = 't1'").get()).toEqual({ n: 0 });
    db.close();
  });

  it('opens the store with WAL, foreign keys on and statement journals in memory (no temp file per grouped transaction)', () => {
    const db = openStore(join(dir, 'd', 'bi.sqlite'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(db.pragma('temp_store', { simple: true })).toBe(2);
    db.close();
  });
});

describe('IdAllocator', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-ids-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('issues every shape of docs/contract/api.md §2.1 from per-prefix yearly sequences', () => {
    const db = openStore(join(dir, 'bi.sqlite'));
    const ids = new IdAllocator({ db, clock: new FakeClock('2026-05-01T00:00:00Z').now });
    expect(ids.next('connection')).toBe('D2026A00001');
    expect(ids.next('connection')).toBe('D2026A00002');
    expect(ids.next('semanticModel')).toBe('SM2026A00001');
    expect(ids.next('vdm')).toBe('V2026A00001');
    expect(ids.next('facade')).toBe('F2026A00001');
    expect(ids.next('experiment')).toBe('E2026A00001');
    expect(ids.next('apiKey')).toBe('SK2026A00001');
    expect(ids.next('user')).toBe('U2026A00001');
    expect(isIdOf('semanticModel', 'SM2026A00001')).toBe(true);
    expect(isIdOf('apiKey', 'SM2026A00001')).toBe(false);
    db.close();
  });

  it('never issues a pinned ID again', () => {
    const db = openStore(join(dir, 'bi.sqlite'));
    const ids = new IdAllocator({ db, clock: new FakeClock('2026-05-01T00:00:00Z').now });
    ids.pin('connection', 'D2026A00041');
    expect(ids.next('connection')).toBe('D2026A00042');
    ids.pin('connection', 'D2026A00007'); // below the sequence: still never issued again
    expect(ids.next('connection')).toBe('D2026A00043');
    expect(() => ids.pin('connection', 'V2026A00001')).toThrow(/not a connection ID/);
    db.close();
  });

  it('gives strictly increasing stamps even when the clock stands still, across a reopen', () => {
    const clock = new FakeClock('2026-05-01T00:00:00Z');
    let db = openStore(join(dir, 'bi.sqlite'));
    let ids = new IdAllocator({ db, clock: clock.now });
    const t = clock.now().getTime();
    expect([ids.nextStamp('p'), ids.nextStamp('p'), ids.nextStamp('p')]).toEqual([t, t + 1, t + 2]);
    db.close();
    db = openStore(join(dir, 'bi.sqlite'));
    ids = new IdAllocator({ db, clock: clock.now });
    expect(ids.nextStamp('p')).toBe(t + 3);
    db.close();
  });
});
