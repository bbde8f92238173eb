import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { CliIO } from '../../../controller/cli/io.ts';
import { main } from '../../../controller/cli/main.ts';
import { testSchemas } from '../../helpers/runtime.ts';
import { listenControlSocket } from '../../../api/control-socket.ts';
import { claimStore, CONTROL_SOCKET, releaseStore, updateClaim } from '../../../controller/store/owner.ts';
import { connection, coreModel, makeGitRuntime, Remote, type GitTestRuntime } from './harness.ts';

function bufferIO(env: NodeJS.ProcessEnv): CliIO & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return { lines, errors, out: (l) => lines.push(l), err: (l) => errors.push(l), env, stdin: process.stdin };
}

describe('bictl status and bictl rollback', () => {
  let remote: Remote;
  let t: GitTestRuntime;
  let env: NodeJS.ProcessEnv;

  beforeEach(async () => {
    remote = new Remote().init();
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Warehouse'));
    remote.write('manifests/core-models/retail.yaml', coreModel('retail'));
    remote.write('manifests/bad.yaml', 'kind: Client\n');
    remote.push('initial');
    t = await makeGitRuntime({ url: remote.url });
    env = { BI_GIT_URL: remote.url, BI_GIT_PATH: 'manifests', BI_DB_PATH: join(t.dir, 'data', 'bi.sqlite') };
  });
  afterEach(async () => {
    await t.stop();
    remote.dispose();
  });

  it('status prints the store as a table, with the synced revision', async () => {
    const io = bufferIO(env);
    expect(await main(['node', 'bictl', 'status'], io, { schemas: testSchemas() })).toBe(0);
    const rev = remote.remoteHead();
    const out = io.lines.join('\n').split('\n');
    expect(out[0]).toBe(`git main: last synced revision ${rev}`);
    expect(out[1].split(/\s{2,}/)).toEqual(['KIND', 'NAME', 'PHASE', 'ATTEMPTS', 'NEXT RETRY', 'APPLIED', 'ATTEMPTED', 'PATH', 'RESOURCES', 'MESSAGE']);
    expect(out[3]).toMatch(new RegExp(`^Connection\\s+wh\\s+Synced\\s+0\\s+${rev.slice(0, 12)}\\s+${rev.slice(0, 12)}\\s+connections/wh.yaml\\s+connectionId=D\\d{4}A\\d{5}$`));
    expect(out[2]).toMatch(/^Client\s+bad.yaml\s+Invalid\s+0\s+bad.yaml\s+.*apiVersion/);
    expect(out.at(-1)).toBe('3 manifests: 2 synced, 0 failed, 1 invalid, 0 pending, 0 pruned');
  });

  it('status filters by kind and phase, and refuses an unknown phase', async () => {
    const io = bufferIO(env);
    expect(await main(['node', 'bictl', 'status', '--kind', 'CoreModel', '--phase', 'Synced'], io, { schemas: testSchemas() })).toBe(0);
    expect(io.lines.at(-1)).toBe('1 manifests: 1 synced, 0 failed, 0 invalid, 0 pending, 0 pruned');
    const bad = bufferIO(env);
    expect(await main(['node', 'bictl', 'status', '--phase', 'Done'], bad, { schemas: testSchemas() })).toBe(2);
    expect(bad.errors).toEqual(['bictl status: phase must be one of Pending, Synced, Failed, Invalid, Pruned']);
  });

  it('rollback pushes a revert commit (history kept) that the controller then applies', async () => {
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Bad change'));
    const bad = remote.push('bad change');
    await t.poll();
    const io = bufferIO(env);
    expect(await main(['node', 'bictl', 'rollback', bad], io, { schemas: testSchemas() })).toBe(0);
    const [revert] = remote.log();
    const [sha, author, subject] = revert.split('|');
    expect(io.lines).toEqual([`reverted ${bad} with ${sha} on main; the controller applies it on its next poll or webhook`]);
    expect(author).toBe('bi-controller <bi-controller@users.noreply.bi-controller.local>');
    expect(subject).toBe(`rollback: revert ${bad.slice(0, 12)}`);
    expect(remote.log()).toHaveLength(3);

    await t.poll();
    expect(t.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get()).toEqual({ name: 'Warehouse' });
    expect(t.rt.reconciler.status.get('Connection/wh')?.lastAppliedRevision).toBe(sha);
  });

  it('with a server on the store, rollback goes through its control socket: reverted and applied at once', async () => {
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Bad change'));
    const bad = remote.push('bad change');
    await t.poll();
    const data = t.rt.config.dataDir;
    claimStore(data, 'serve', () => 'stop it first');
    const control = await listenControlSocket(t.rt, join(data, CONTROL_SOCKET));
    updateClaim(data, { socket: control.path });
    try {
      const io = bufferIO(env);
      expect(await main(['node', 'bictl', 'rollback', bad], io, { schemas: testSchemas() })).toBe(0);
      const [sha] = remote.log()[0].split('|');
      expect(io.lines).toEqual([`reverted ${bad} with ${sha} on main through the server (pid ${process.pid}), which applied it:`, '1 applied, 0 unchanged, 0 pruned, 0 failed, 0 invalid']);
      // Applied by the server's own reconciler, no poll needed.
      expect(t.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get()).toEqual({ name: 'Warehouse' });
    } finally {
      await control.close();
      releaseStore(data);
    }
  });

  it('rollback of an unknown revision fails clearly', async () => {
    const io = bufferIO(env);
    expect(await main(['node', 'bictl', 'rollback', 'deadbeef'], io, { schemas: testSchemas() })).toBe(1);
    expect(io.errors).toEqual(['bictl rollback: revision deadbeef not found on main']);
  });
});

describe('bictl rollback in directory mode', () => {
  it('refuses with a clear message', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bi-cli-'));
    const io = bufferIO({ BI_DB_PATH: join(dir, 'bi.sqlite'), BI_MANIFESTS_DIR: join(dir, 'm') });
    expect(await main(['node', 'bictl', 'rollback', 'abc123'], io, { schemas: testSchemas() })).toBe(2);
    expect(io.errors).toEqual(['bictl rollback: needs git mode (set BI_GIT_URL); in directory mode restore the file from your own history']);
    rmSync(dir, { recursive: true, force: true });
  });
});
