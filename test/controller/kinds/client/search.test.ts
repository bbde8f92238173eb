import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RE2JS } from 're2js';
import { UnavailableError, ValidationError } from '../../../../controller/errors.ts';
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

  const searches: RegistrySearch[] = [];
  beforeEach(async () => {
    t = await makeTestRuntime();
  });
  afterEach(async () => {
    await Promise.all(searches.splice(0).map((s) => s.close()));
    await t.close();
  });

  it('matches clientId or clientName case-insensitively, with a status filter', async () => {
    insert('ACME', 'Acme Retail');
    insert('GLOBEX', 'Globex Corp', 'FAILED');
    insert('INITECH', 'Initech retail');
    const s = new RegistrySearch({ db: t.rt.db });
    searches.push(s);
    expect(ids(await s.match(re('retail$'), undefined))).toEqual(['ACME', 'INITECH']);
    expect(ids(await s.match(re('^g'), undefined))).toEqual(['GLOBEX']);
    expect(ids(await s.match(re('.'), 'FAILED'))).toEqual(['GLOBEX']);
  });

  it('sees registry writes at once (its copy reloads when the generation moves)', async () => {
    const s = new RegistrySearch({ db: t.rt.db });
    searches.push(s);
    expect(await s.match(re('^new'), undefined)).toEqual([]);
    insert('NEWCO', 'New Co');
    expect(ids(await s.match(re('^new'), undefined))).toEqual(['NEWCO']);
    t.rt.db.prepare("UPDATE clients SET client_name = 'Renamed' WHERE client_id = 'NEWCO'").run();
    expect(ids(await s.match(re('renamed'), undefined))).toEqual(['NEWCO']);
    t.rt.db.prepare("DELETE FROM clients WHERE client_id = 'NEWCO'").run();
    expect(await s.match(re('renamed'), undefined)).toEqual([]);
  });

  it('stops a pathological pattern at its budget (its worker terminated) with the 400 text; the next search works', async () => {
    insert('ZED', `${'a'.repeat(40)}!`);
    const s = new RegistrySearch({ db: t.rt.db, budgetMs: 50 });
    searches.push(s);
    await expect(s.match(re('(a+)+$'), undefined)).rejects.toThrow(new ValidationError([{ path: 'search', message: 'search pattern is too expensive to evaluate (over 50 ms)' }]));
    expect(ids(await s.match(re('^zed'), undefined))).toEqual(['ZED']);
  });

  it('never runs the pattern on the main thread: the event loop keeps turning during pathological searches', async () => {
    for (let i = 0; i < 2000; i++) insert(`C${i}`, `${'a'.repeat(28)}!`);
    const s = new RegistrySearch({ db: t.rt.db, budgetMs: 3000, workers: 2 });
    searches.push(s);
    let settled = false;
    const results = Promise.allSettled(Array.from({ length: 2 }, () => s.match(re('(a+)+$'), undefined))).finally(() => (settled = true));
    // A main-thread regex would hold the loop until its budget ends, and the searches would settle
    // before these turns are done; in workers they run on while the loop turns (an ordering, not a time).
    let turns = 0;
    while (!settled && turns < 100) {
      await new Promise((resolve) => setImmediate(resolve));
      turns++;
    }
    expect({ turns, settled }).toEqual({ turns: 100, settled: false });
    expect((await results).every((r) => r.status === 'rejected')).toBe(true);
  });

  it('refuses at once (503) past its queue, and every search after close', async () => {
    insert('ZED', `${'a'.repeat(40)}!`);
    const s = new RegistrySearch({ db: t.rt.db, budgetMs: 200, workers: 1, maxQueued: 1 });
    searches.push(s);
    const running = s.match(re('(a+)+$'), undefined);
    const queued = s.match(re('(a+)+b$'), undefined);
    await expect(s.match(re('(a+)+c$'), undefined)).rejects.toThrow(new UnavailableError('Too many searches in progress; retry shortly'));
    await expect(running).rejects.toThrow(ValidationError);
    await expect(queued).rejects.toThrow(ValidationError);
    await s.close();
    await expect(s.match(re('zed'), undefined)).rejects.toThrow(UnavailableError);
  });

  it('falls back to RE2 for syntax JavaScript reads differently', async () => {
    insert('ACME', 'Acme Retail');
    expect(nativeFlavour('(?P<x>acme)')).toBeUndefined();
    expect(nativeFlavour('\\Aacme')).toBeUndefined();
    expect(nativeFlavour('ac.e')).toBe('ac.e');
    const s = new RegistrySearch({ db: t.rt.db });
    searches.push(s);
    expect(ids(await s.match(re('(?P<x>acme)'), undefined))).toEqual(['ACME']);
  });
});
