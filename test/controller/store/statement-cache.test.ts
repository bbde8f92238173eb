import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { cacheStatements } from '../../../controller/store/statement-cache.ts';

describe('cacheStatements', () => {
  const open = (max?: number) => {
    const db = cacheStatements(new Database(':memory:'), max);
    db.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    return db;
  };

  it('hands out the same compiled statement for the same SQL', () => {
    const db = open();
    expect(db.prepare('SELECT a FROM t')).toBe(db.prepare('SELECT a FROM t'));
    expect(db.prepare('SELECT a FROM t')).not.toBe(db.prepare('SELECT b FROM t'));
  });

  it("never leaks one caller's pluck or raw mode into another's", () => {
    const db = open();
    expect(db.prepare('SELECT a, b FROM t ORDER BY a').pluck().all()).toEqual([1, 2]);
    expect(db.prepare('SELECT a, b FROM t ORDER BY a').all()).toEqual([{ a: 1, b: 'x' }, { a: 2, b: 'y' }]);
    expect(db.prepare('SELECT a, b FROM t ORDER BY a').raw().all()).toEqual([[1, 'x'], [2, 'y']]);
    expect(db.prepare('SELECT a, b FROM t ORDER BY a').get()).toEqual({ a: 1, b: 'x' });
    expect(db.prepare('UPDATE t SET b = ? WHERE a = ?').run('z', 1).changes).toBe(1);
  });

  it('keeps at most `max` statements, dropping the least recently used', () => {
    const db = open(2);
    const first = db.prepare('SELECT 1');
    db.prepare('SELECT 2');
    db.prepare('SELECT 1'); // used again: now the most recent
    db.prepare('SELECT 3'); // drops SELECT 2
    expect(db.prepare('SELECT 1')).toBe(first);
  });
});
