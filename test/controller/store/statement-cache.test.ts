import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { StatementCache } from '../../../controller/store/statement-cache.ts';

describe('StatementCache', () => {
  const open = (max?: number) => {
    const db = new Database(':memory:');
    db.exec("CREATE TABLE t (a INTEGER, b TEXT); INSERT INTO t VALUES (1, 'x'), (2, 'y')");
    return new StatementCache({ db, max });
  };

  it('hands out the same compiled statement for the same SQL', () => {
    const cache = open();
    expect(cache.prepare('SELECT a FROM t')).toBe(cache.prepare('SELECT a FROM t'));
    expect(cache.prepare('SELECT a FROM t')).not.toBe(cache.prepare('SELECT b FROM t'));
  });

  it("never leaks one caller's pluck or raw mode into another's", () => {
    const cache = open();
    expect(cache.prepare('SELECT a, b FROM t ORDER BY a').pluck().all()).toEqual([1, 2]);
    expect(cache.prepare('SELECT a, b FROM t ORDER BY a').all()).toEqual([{ a: 1, b: 'x' }, { a: 2, b: 'y' }]);
    expect(cache.prepare('SELECT a, b FROM t ORDER BY a').raw().all()).toEqual([[1, 'x'], [2, 'y']]);
    expect(cache.prepare('SELECT a, b FROM t ORDER BY a').get()).toEqual({ a: 1, b: 'x' });
    expect(cache.prepare('UPDATE t SET b = ? WHERE a = ?').run('z', 1).changes).toBe(1);
  });

  it('keeps at most `max` statements, dropping the least recently used', () => {
    const cache = open(2);
    const first = cache.prepare('SELECT 1');
    const second = cache.prepare('SELECT 2');
    cache.prepare('SELECT 1'); // used again: now the most recent
    cache.prepare('SELECT 3'); // drops SELECT 2
    expect(cache.size).toBe(2);
    expect(cache.prepare('SELECT 1')).toBe(first);
    expect(cache.prepare('SELECT 2')).not.toBe(second); // compiled anew: it had been dropped
    for (let i = 0; i < 10; i++) cache.prepare(`SELECT ${i + 10}`);
    expect(cache.size).toBe(2);
  });
});
