import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ManifestFiles, NOT_A_REGULAR_FILE } from '../../../controller/sources/files.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';
import { stringify } from 'yaml';

const core = (name: string) => stringify(manifest('CoreModel', name, { name }));

/** The filesystem boundary of docs/contract/design.md with real symlinks, FIFOs and loops. */
describe('manifests root boundary', () => {
  let t: TestRuntime | undefined;
  const dirs: string[] = [];
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const outside = () => {
    const d = mkdtempSync(join(tmpdir(), 'bi-outside-'));
    dirs.push(d);
    return d;
  };

  it('refuses a symlink to a file outside the root: Invalid with the fixed text, none of the target in the status', async () => {
    t = await makeTestRuntime();
    const secret = join(outside(), 'passwd.yaml');
    writeFileSync(secret, 'root:x:0:0:SECRET-FRAGMENT:/root:/bin/bash\n[');
    symlinkSync(secret, join(t.manifests, 'evil.yaml'));
    const report = await t.sync();
    expect(report.invalid).toEqual(['File/evil.yaml']);
    const row = t.rt.reconciler.status.get('File/evil.yaml');
    expect(row).toMatchObject({ phase: 'Invalid', reason: 'unreadable', message: NOT_A_REGULAR_FILE, hash: null });
    expect(JSON.stringify(t.rt.reconciler.listStatus())).not.toContain('SECRET');
  });

  it('refuses FIFOs, sockets and dangling links without blocking the sync', async () => {
    t = await makeTestRuntime();
    execFileSync('mkfifo', [join(t.manifests, 'pipe.yaml')]);
    symlinkSync(join(t.manifests, 'nowhere.yaml'), join(t.manifests, 'dangling.yaml'));
    t.write('ok.yaml', core('ok'));
    const report = await t.sync();
    expect(report.invalid.sort()).toEqual(['File/dangling.yaml', 'File/pipe.yaml']);
    expect(t.rt.reconciler.status.get('File/pipe.yaml')?.message).toBe(NOT_A_REGULAR_FILE);
    expect(t.rt.reconciler.status.get('CoreModel/ok')?.phase).toBe('Synced');
  });

  it('reads a symlink to a regular file inside the root like that file', async () => {
    t = await makeTestRuntime();
    t.write('.shared/m.yaml', core('m'));
    symlinkSync('.shared/m.yaml', join(t.manifests, 'm.yaml'));
    await t.sync();
    expect(t.rt.reconciler.status.get('CoreModel/m')).toMatchObject({ phase: 'Synced', path: 'm.yaml' });
  });

  it('does not follow directory symlinks: a loop or an outside tree gives no status rows', async () => {
    t = await makeTestRuntime();
    t.write('a/x.yaml', core('x'));
    symlinkSync('..', join(t.manifests, 'a', 'loop'));
    const foreign = outside();
    writeFileSync(join(foreign, 'y.yaml'), core('y'));
    symlinkSync(foreign, join(t.manifests, 'foreign'));
    const report = await t.sync();
    expect(report.scanned).toBe(1);
    expect(t.rt.reconciler.listStatus().map((r) => r.key)).toEqual(['CoreModel/x']);
    // A path through a directory symlink, as a watcher might report it, is refused too.
    expect(new ManifestFiles(t.manifests).read('foreign/y.yaml')).toEqual({ path: 'foreign/y.yaml', unreadable: NOT_A_REGULAR_FILE });
  });

  it('reads a path through a folder symlink only where its target stays inside the root; dot-dot paths never leave it', async () => {
    t = await makeTestRuntime();
    t.write('a/x.yaml', core('x'));
    symlinkSync('a', join(t.manifests, 'alias'));
    const foreign = outside();
    writeFileSync(join(foreign, 'y.yaml'), core('y'));
    const files = new ManifestFiles(t.manifests);
    expect(files.read('alias/x.yaml')).toMatchObject({ path: 'alias/x.yaml', bytes: expect.any(Buffer) });
    const escape = relative(t.manifests, join(foreign, 'y.yaml'));
    expect(files.read(escape)).toEqual({ path: escape, unreadable: NOT_A_REGULAR_FILE });
    expect(files.read(`a/../${escape}`)).toEqual({ path: `a/../${escape}`, unreadable: NOT_A_REGULAR_FILE });
    // A file where a folder was expected, and a folder where a file was: nothing to read.
    expect(files.read('a/x.yaml/z.yaml')).toBeNull();
    expect(files.read('a')).toBeNull();
    expect(files.read('a/gone.yaml')).toBeNull();
  });

  it('never opens the store through a symlink: an outside reader cannot drop the WAL, acknowledged writes survive a restart', async () => {
    t = await makeTestRuntime();
    const dbPath = t.rt.config.dbPath;
    symlinkSync(dbPath, join(t.manifests, 'store.yaml'));
    symlinkSync(`${dbPath}-wal`, join(t.manifests, 'wal.yaml'));
    // A write the server acknowledged, still in the WAL.
    t.rt.db.prepare("INSERT INTO counters (name, value) VALUES ('acknowledged', 42)").run();
    await t.sync();
    // An outside reader (a backup job) opens and closes the store.
    const reader = spawnSync(process.execPath, ['-e', `const D=require('better-sqlite3'); const d=new D(${JSON.stringify(dbPath)}); d.prepare('SELECT 1').get(); d.close();`], {
      cwd: process.cwd(),
      encoding: 'utf8',
    });
    expect(reader.status, reader.stderr).toBe(0);
    expect(existsSync(`${dbPath}-wal`)).toBe(true);
    t.rt.db.prepare("INSERT INTO counters (name, value) VALUES ('after-reader', 43)").run();
    t = await t.restart();
    const rows = t.rt.db.prepare("SELECT name, value FROM counters WHERE name IN ('acknowledged', 'after-reader') ORDER BY name").all();
    expect(rows).toEqual([
      { name: 'acknowledged', value: 42 },
      { name: 'after-reader', value: 43 },
    ]);
    expect(t.rt.reconciler.status.get('File/store.yaml')?.message).toBe(NOT_A_REGULAR_FILE);
  });

  it('bictl validate applies the same boundary', async () => {
    const root = outside();
    const secret = join(outside(), 's.yaml');
    writeFileSync(secret, core('s'));
    mkdirSync(join(root, 'x'));
    symlinkSync(secret, join(root, 'x', 's.yaml'));
    const { validateDir } = await import('../../../controller/cli/commands/validate.ts');
    expect(await validateDir(root)).toEqual({ files: 1, problems: [`x/s.yaml: ${NOT_A_REGULAR_FILE}`], warnings: [] });
  });
});
