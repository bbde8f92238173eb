import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RE2JS } from 're2js';
import { ValidationError } from '../../../../controller/errors.ts';
import { nativeFlavour, RegistrySearch } from '../../../../controller/kinds/client/search.ts';
import { makeTestRuntime, type TestRuntime } from '../../../helpers/runtime.ts';

const re = (p: string) => RE2JS.compile(p, RE2JS.CASE_INSENSITIVE);

describe('RegistrySearch', () => {
  let t: TestRuntime;
  const insert = (id: string, name: string, status = 'ACTIVE') =>
    t.rt.db
      .prepare("INSERT INTO clients (client_id, client_name, status, onboarded_date, last_modified_date) VALUES (?, ?, ?, '2026-01-01', '2026-01-01')")
      .run(id, name, status);
  const ids = (rowids: number[]) =>
    rowids.map((r) => (t.rt.db.prepare('SELECT client_id FROM clients WHERE rowid = ?').pluck().get(r) as string)).sort();

  beforeEach(async () => {
    t = await makeTestRuntime();
  });
  afterEach(async () => t.close());

  it('matches clientId or clientName case-insensitively, with a status filter', () => {
    insert('ACME', 'Acme Retail');
    insert('GLOBEX', 'Globex Corp', 'FAILED');
    insert('INITECH', 'Initech retail');
    const s = new RegistrySearch({ db: t.rt.db });
    expect(ids(s.match(re('retail$'), undefined))).toEqual(['ACME', 'INITECH']);
    expect(ids(s.match(re('^g'), undefined))).toEqual(['GLOBEX']);
    expect(ids(s.match(re('.'), 'FAILED'))).toEqual(['GLOBEX']);
  });

  it('sees registry writes at once (its copy reloads when the generation moves)', () => {
    const s = new RegistrySearch({ db: t.rt.db });
    expect(s.match(re('^new'), undefined)).toEqual([]);
    insert('NEWCO', 'New Co');
    expect(ids(s.match(re('^new'), undefined))).toEqual(['NEWCO']);
    t.rt.db.prepare("UPDATE clients SET client_name = 'Renamed' WHERE client_id = 'NEWCO'").run();
    expect(ids(s.match(re('renamed'), undefined))).toEqual(['NEWCO']);
    t.rt.db.prepare("DELETE FROM clients WHERE client_id = 'NEWCO'").run();
    expect(s.match(re('renamed'), undefined)).toEqual([]);
  });

  it('stops a pathological pattern at its budget with a 400-class error', () => {
    insert('ZED', `${'a'.repeat(40)}!`);
    const s = new RegistrySearch({ db: t.rt.db, budgetMs: 50 });
    const started = performance.now();
    expect(() => s.match(re('(a+)+$'), undefined)).toThrow(ValidationError);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('falls back to RE2 for syntax JavaScript reads differently', () => {
    insert('ACME', 'Acme Retail');
    expect(nativeFlavour('(?P<x>acme)')).toBeUndefined();
    expect(nativeFlavour('\\Aacme')).toBeUndefined();
    expect(nativeFlavour('ac.e')).toBe('ac.e');
    const s = new RegistrySearch({ db: t.rt.db });
    expect(ids(s.match(re('(?P<x>acme)'), undefined))).toEqual(['ACME']);
  });
});
