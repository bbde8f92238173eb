import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServer, type Server } from '../../../api/server.ts';
import { loadConfig } from '../../../controller/config.ts';
import { claimStore, OWNER_FILE, processStarted, storeOwner, StoreOwnedError, type StoreOwner } from '../../../controller/store/owner.ts';
import { runCli } from '../../helpers/cli.ts';
import { manifest } from '../../helpers/runtime.ts';
import { testSchemas } from '../../helpers/schemas.ts';

/** Another live process (its pid is what a claim names). */
function sleeper(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  return new Promise((resolve) => child.once('spawn', () => resolve(child)));
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('one store, one writer', () => {
  let dir: string;
  let data: string;
  let manifests: string;
  let flags: string[];
  const children: ChildProcess[] = [];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-owner-'));
    data = join(dir, 'data');
    manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    mkdirSync(data);
    writeFileSync(join(manifests, 'core.yaml'), stringify(manifest('CoreModel', 'core', { name: 'Core' })));
    flags = ['--manifests', manifests, '--db', join(data, 'bi.sqlite')];
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill('SIGKILL');
      await exited(c);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const claimBy = async (extra: Partial<StoreOwner> = {}): Promise<ChildProcess & { pid: number }> => {
    const child = await sleeper();
    children.push(child);
    const pid = child.pid as number;
    const owner: StoreOwner = { pid, role: 'serve', started: processStarted(pid), url: 'http://127.0.0.1:8080', at: new Date().toISOString(), ...extra };
    writeFileSync(join(data, OWNER_FILE), JSON.stringify(owner));
    return child as ChildProcess & { pid: number };
  };

  it('bictl sync refuses while a live server owns the store and cannot be reached; the store is not touched', async () => {
    const server = await claimBy();
    const r = await runCli(['sync', ...flags]);
    expect(r).toEqual({
      code: 1,
      out: '',
      err: `a server (pid ${server.pid}) owns this store: sync through it (POST http://127.0.0.1:8080/v1/reconciler/sync as an admin, or Sync in the console), or stop it and run bictl sync again`,
    });
    expect(existsSync(join(data, 'bi.sqlite'))).toBe(false);
    // The claim is the server's still.
    expect(storeOwner(data)?.pid).toBe(server.pid);
  });

  it('bictl users stays usable beside a running server', async () => {
    await claimBy();
    const r = await runCli(['users', 'list', ...flags]);
    expect(r.code).toBe(0);
  });

  it('a claim whose process is gone, or whose pid was reused by another process, is stale: sync runs and gives the store back', async () => {
    const gone = await claimBy();
    gone.kill('SIGKILL');
    await exited(gone);
    expect(storeOwner(data)).toBeUndefined();
    expect((await runCli(['sync', ...flags])).out).toBe('1 applied, 0 unchanged, 0 pruned, 0 failed, 0 invalid');
    expect(existsSync(join(data, OWNER_FILE))).toBe(false);

    // The same pid alive, but started at another time than the claim says: not the owner.
    await claimBy({ started: '1' });
    expect(storeOwner(data)).toBeUndefined();
    expect((await runCli(['sync', ...flags])).code).toBe(0);
  });

  it('of two claims one wins: a second server on the store is refused', async () => {
    const server = await claimBy();
    let err: unknown;
    try {
      claimStore(data, 'serve', () => 'stop it first');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreOwnedError);
    expect((err as Error).message).toBe(`a server (pid ${server.pid}) owns this store: stop it first`);
  });

  it('bictl rollback refuses while a server owns the store and cannot be reached', async () => {
    const server = await claimBy();
    const r = await runCli(['rollback', 'HEAD', ...flags], { env: { BI_GIT_URL: `file://${join(dir, 'none.git')}` } });
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      `a server (pid ${server.pid}) owns this store: roll back through it once it answers on its control socket, or stop it and run bictl rollback again`,
    );
  });

  it('bictl clients suspend|resume|restore|offboard|purge refuse while a live server owns the store; the store is not touched', async () => {
    const server = await claimBy();
    for (const verb of ['suspend', 'resume', 'restore', 'offboard', 'purge']) {
      const r = await runCli(['clients', verb, 'ACME', ...flags]);
      expect(r).toEqual({
        code: 1,
        out: '',
        err: `a server (pid ${server.pid}) owns this store: ${verb} through it (POST http://127.0.0.1:8080/v1/bi/admin/clients/<clientId>/${verb}/<userId> as an admin), or stop it and run bictl clients ${verb} again`,
      });
    }
    expect(existsSync(join(data, 'bi.sqlite'))).toBe(false);
    expect(storeOwner(data)?.pid).toBe(server.pid);
  });

  describe('with a server running on the store', () => {
    let server: Server;
    beforeEach(async () => {
      server = await startServer(loadConfig({}, { manifestsDir: manifests, dbPath: join(data, 'bi.sqlite'), dataDir: data, port: 0, logLevel: 'silent' }), { schemas: testSchemas() });
      await new Promise<void>((resolve) => (server.runtime.reconciler.ready ? resolve() : server.runtime.reconciler.once('ready', () => resolve())));
    });
    afterEach(async () => {
      await server.close();
    });

    it('the server claims the store with its pid, URL and control socket, and gives it back when it stops', async () => {
      const owner = JSON.parse(readFileSync(join(data, OWNER_FILE), 'utf8')) as StoreOwner;
      expect(owner).toMatchObject({ pid: process.pid, role: 'serve', url: server.url, socket: join(data, 'control.sock') });
      await expect(startServer(loadConfig({}, { manifestsDir: manifests, dbPath: join(data, 'bi.sqlite'), dataDir: data, port: 0, logLevel: 'silent' }), { schemas: testSchemas() })).rejects.toThrow(
        `a server (pid ${process.pid}) owns this store: stop it first, or give this one another BI_DB_PATH`,
      );
      await server.close();
      expect(existsSync(join(data, OWNER_FILE))).toBe(false);
      expect(existsSync(join(data, 'control.sock'))).toBe(false);
    });

    it('bictl sync goes through the server: its reconciler applies, IDs stay', async () => {
      const before = server.runtime.reconciler.status.get('CoreModel/core')?.resourceIds;
      writeFileSync(join(manifests, 'core2.yaml'), stringify(manifest('CoreModel', 'core2', { name: 'Core 2' })));
      const r = await runCli(['sync', ...flags]);
      expect(r.err).toBe('');
      expect(r.out).toMatch(new RegExp(`^through the server \\(pid ${process.pid}\\): [01] applied, [12] unchanged, 0 pruned, 0 failed, 0 invalid$`));
      expect(r.code).toBe(0);
      expect(server.runtime.reconciler.status.get('CoreModel/core2')?.phase).toBe('Synced');
      expect(server.runtime.reconciler.status.get('CoreModel/core')?.resourceIds).toEqual(before);
      // Still the server's store.
      expect(storeOwner(data)?.url).toBe(server.url);
    });
  });
});
