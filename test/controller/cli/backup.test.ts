import { copyFileSync, existsSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';

const mode = (f: string) => statSync(f).mode & 0o777;
const coreModels = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT key FROM manifests WHERE kind = 'CoreModel' ORDER BY key").pluck().all() as string[]);
  } finally {
    db.close();
  }
};

describe('the store on disk', () => {
  let t: TestRuntime;
  afterEach(async () => t.close());

  it('is created owner-only: data directory 0700, store, WAL and SHM 0600', async () => {
    t = await makeTestRuntime();
    const db = join(t.dir, 'data', 'bi.sqlite');
    expect([mode(join(t.dir, 'data')), mode(db), mode(`${db}-wal`), mode(`${db}-shm`)]).toEqual([0o700, 0o600, 0o600, 0o600]);
  });

  it('is created owner-only also when the store is claimed first (bictl sync, bictl serve): data directory 0700', async () => {
    t = await makeTestRuntime();
    const dataDir = join(t.dir, 'fresh', 'data');
    const r = await runCli(['--manifests', join(t.dir, 'manifests'), '--db', join(dataDir, 'bi.sqlite'), 'sync']);
    expect(r.code).toBe(0);
    expect(mode(dataDir)).toBe(0o700);
  });

  it('bictl backup copies a live store consistently (0600), and the documented restore brings that state back', async () => {
    t = await makeTestRuntime();
    t.write('core/a.yaml', manifest('CoreModel', 'a', { name: 'A' }));
    await t.sync();
    const db = join(t.dir, 'data', 'bi.sqlite');
    const backup = join(t.dir, 'backup.sqlite');
    // The server keeps the store open (its last writes still in the WAL) while the backup runs.
    const r = await runCli(['--db', db, 'backup', backup]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^backed up ${db} to ${backup} \\(\\d+ bytes, schema version \\d+\\)$`));
    expect(r.err).toBe('keep BI_SECRET_KEY with this backup: the credentials stored in it are encrypted with that key');
    expect(mode(backup)).toBe(0o600);
    // One file: no WAL or SHM left beside the copy by its check.
    expect([existsSync(`${backup}-wal`), existsSync(`${backup}-shm`)]).toEqual([false, false]);
    expect(coreModels(backup)).toEqual(['CoreModel/a']);
    // Written after the backup: not in it.
    t.write('core/b.yaml', manifest('CoreModel', 'b', { name: 'B' }));
    await t.sync();
    expect(coreModels(backup)).toEqual(['CoreModel/a']);
    expect(await runCli(['--db', db, 'backup', backup])).toMatchObject({ code: 1, err: `bictl: ${backup} exists: a backup never overwrites a file` });

    // Restore (docs/operations.md): stop the server, put the backup in place of the store, remove its WAL and SHM, start.
    await t.rt.stop();
    copyFileSync(backup, db);
    for (const f of [`${db}-wal`, `${db}-shm`]) if (existsSync(f)) unlinkSync(f);
    t.remove('core/b.yaml');
    t = await makeTestRuntime({ dir: t.dir });
    expect(t.rt.reconciler.status.get('CoreModel/a')?.phase).toBe('Synced');
    expect(t.rt.reconciler.status.get('CoreModel/b')).toBeUndefined();
  });

  it('bictl backup names a missing store', async () => {
    t = await makeTestRuntime();
    const r = await runCli(['--db', join(t.dir, 'nope.sqlite'), 'backup', join(t.dir, 'x.sqlite')]);
    expect(r).toMatchObject({ code: 1, err: `bictl: no store at ${join(t.dir, 'nope.sqlite')} (BI_DB_PATH / --db)` });
  });
});
