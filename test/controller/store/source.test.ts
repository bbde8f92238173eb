import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer } from '../../../api/server.ts';
import { loadConfig } from '../../../controller/config.ts';
import { checkDataDirPlacement } from '../../../controller/store/source.ts';
import { runCli } from '../../helpers/cli.ts';
import { manifest } from '../../helpers/runtime.ts';

describe('the store remembers its source', () => {
  let dir: string;
  let db: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-source-'));
    db = join(dir, 'data', 'bi.sqlite');
    for (const f of ['a', 'b']) {
      mkdirSync(join(dir, f));
      writeFileSync(join(dir, f, 'core.yaml'), stringify(manifest('CoreModel', `core-${f}`, { name: f })));
    }
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('bictl diff, sync and status refuse a store kept from another source, saying which is which; users (no manifests) work', async () => {
    expect((await runCli(['--manifests', join(dir, 'a'), '--db', db, 'sync'])).code).toBe(0);
    const other = ['--manifests', join(dir, 'b'), '--db', db];
    // `users` touches no manifest: suggesting --adopt-source there would have pruned the store's objects.
    expect((await runCli([...other, 'users', 'list'])).code).toBe(0);
    for (const args of [['sync'], ['diff'], ['status']]) {
      const r = await runCli([...other, ...args]);
      expect(r.code, args.join(' ')).toBe(1);
      expect(r.err).toBe(
        `bictl: the store ${db} is kept from the folder ${join(dir, 'a')}, but this command is configured for the folder ${join(dir, 'b')}; ` +
          "set BI_MANIFESTS_DIR / BI_GIT_URL, BI_GIT_BRANCH, BI_GIT_PATH to the store's source, or pass --adopt-source to make the configured source the store's own (objects only in the old source are then pruned)",
      );
    }
    // A folder sync into a git-mode store, the fault the rule is for: the same refusal naming git.
    const git = await runCli(['--manifests', join(dir, 'a'), '--db', db, 'status'], { env: { BI_GIT_URL: 'https://user:token@example.com/m.git', BI_GIT_PATH: 'deploy' } });
    expect(git.err).toContain('configured for git https://***@example.com/m.git (branch main, path deploy)');
    // The operator switches deliberately; from then on the new source is the store's own.
    const adopted = await runCli([...other, '--adopt-source', 'sync']);
    expect(adopted.code).toBe(0);
    expect((await runCli([...other, 'status'])).code).toBe(0);
    expect((await runCli(['--manifests', join(dir, 'a'), '--db', db, 'status'])).err).toContain(`kept from the folder ${join(dir, 'b')}`);
  });

  it('reading commands do not record a source on a new store (users added before the first serve)', async () => {
    expect((await runCli(['--manifests', join(dir, 'a'), '--db', db, 'users', 'add', 'alice', '--admin'], { stdin: 'a-long-passphrase\n' })).code).toBe(0);
    expect((await runCli(['--manifests', join(dir, 'b'), '--db', db, 'sync'])).code).toBe(0);
  });

  it('serve refuses to start against a store kept from another source', async () => {
    expect((await runCli(['--manifests', join(dir, 'a'), '--db', db, 'sync'])).code).toBe(0);
    const config = loadConfig({}, { manifestsDir: join(dir, 'b'), dbPath: db, dataDir: join(dir, 'data'), port: 0 });
    await expect(startServer(config)).rejects.toThrow(`the store ${db} is kept from the folder ${join(dir, 'a')}`);
  });
});

describe('data directory and manifests folder apart', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-placement-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('the server refuses to start with the store inside the manifests folder, or the folder inside the data directory', async () => {
    const m = join(dir, 'manifests');
    mkdirSync(m);
    const inside = loadConfig({}, { manifestsDir: m, dbPath: join(m, 'data', 'bi.sqlite'), dataDir: join(m, 'data'), port: 0 });
    await expect(startServer(inside)).rejects.toThrow(
      `the data directory ${join(m, 'data')} (BI_DB_PATH's folder: store, WAL, secrets) lies inside the manifests folder ${m} (BI_MANIFESTS_DIR); put them apart`,
    );
    const around = loadConfig({}, { manifestsDir: join(dir, 'data', 'manifests'), dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data'), port: 0 });
    await expect(startServer(around)).rejects.toThrow(/the manifests folder .* lies inside the data directory/);
  });

  it('sees through symlinks', () => {
    const m = join(dir, 'manifests');
    mkdirSync(join(m, 'real-data'), { recursive: true });
    symlinkSync(join(m, 'real-data'), join(dir, 'data'));
    expect(() => checkDataDirPlacement({ manifestsDir: m, dataDir: join(dir, 'data') })).toThrow(/lies inside the manifests folder/);
    expect(() => checkDataDirPlacement({ manifestsDir: m, dataDir: join(dir, 'elsewhere') })).not.toThrow();
  });
});
