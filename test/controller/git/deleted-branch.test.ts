import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UnavailableError } from '../../../controller/errors.ts';
import type { Manifest } from '../../../controller/types.ts';
import { connection, coreModel, git, makeGitRuntime, Remote, type GitTestRuntime } from './harness.ts';

const alice = { userId: 'U2026A00001', username: 'alice' };

function submit(t: GitTestRuntime, relPath: string, manifest: Manifest) {
  return t.rt.submitter.submit({ relPath, manifest, caller: { ...alice, role: 'admin', via: 'apiKey' }, message: 'create core model new', withdrawOnFailure: false });
}

/** The remote branch deleted under a running controller (a bad `git push --delete`, a rename). */
describe('a deleted remote branch', () => {
  let remote: Remote;
  let t: GitTestRuntime;

  beforeEach(async () => {
    remote = new Remote().init();
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Warehouse'));
    remote.write('manifests/core-models/retail.yaml', coreModel('retail', 'Retail'));
    remote.push('initial');
    t = await makeGitRuntime({ url: remote.url });
    await t.started;
  });
  afterEach(async () => {
    await t.stop();
    remote.dispose();
  });

  const branches = () => git(remote.bare, 'for-each-ref', '--format=%(refname)', 'refs/heads/');

  it('is an error in the sync (kept for status and /readyz), and nothing is pruned', async () => {
    const head = remote.remoteHead();
    git(remote.bare, 'update-ref', '-d', 'refs/heads/main');
    await expect(t.source.syncNow()).rejects.toThrow(UnavailableError);
    expect(t.source.lastError).toBe(
      `git: branch main no longer exists on ${remote.url} (last seen at ${head.slice(0, 12)}); nothing is synced or written until it is restored (git push origin ${head}:refs/heads/main)`,
    );
    expect(t.rt.reconciler.status.get('CoreModel/retail')?.phase).toBe('Synced');
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM core_models').get()).toEqual({ n: 1 });
  });

  it('an API write never recreates it (503, no branch on the remote), and all works again once it is restored', async () => {
    const head = remote.remoteHead();
    git(remote.bare, 'update-ref', '-d', 'refs/heads/main');
    const write = submit(t, 'core-models/new.yaml', coreModel('new') as unknown as Manifest);
    await expect(write).rejects.toThrow(/branch main no longer exists/);
    await expect(write).rejects.toBeInstanceOf(UnavailableError);
    expect(branches()).toBe('');
    // The same after a restart: the clone remembers the branch.
    await t.stop();
    t = await makeGitRuntime({ url: remote.url, dir: t.dir, noWait: true });
    await expect(t.source.syncNow()).rejects.toThrow(/branch main no longer exists/);
    expect(branches()).toBe('');
    // Restored by the operator: syncs and writes go on, on top of the old history.
    git(remote.bare, 'update-ref', 'refs/heads/main', head);
    await t.source.syncNow();
    expect(t.source.lastError).toBeUndefined();
    const ok = await submit(t, 'core-models/new.yaml', coreModel('new') as unknown as Manifest);
    expect(ok.phase).toBe('Synced');
    expect(git(remote.bare, 'merge-base', '--is-ancestor', head, 'refs/heads/main')).toBe('');
  });
});
