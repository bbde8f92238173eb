import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { connection, coreModel, git, makeGitRuntime, Remote, type GitTestRuntime } from './harness.ts';

describe('GitSource: desired state from a git branch', () => {
  let remote: Remote;
  const runtimes: GitTestRuntime[] = [];
  const start = async (o: Partial<Parameters<typeof makeGitRuntime>[0]> = {}) => {
    const t = await makeGitRuntime({ url: remote.url, ...o });
    runtimes.push(t);
    return t;
  };

  beforeEach(() => {
    remote = new Remote().init();
    remote.write('manifests/core-models/retail.yaml', coreModel('retail', 'Retail'));
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Warehouse'));
    remote.write('README.md', 'not a manifest folder\n');
    remote.write('other/ignored.yaml', connection('outside', 'Outside the manifests path'));
    remote.push('initial manifests');
  });
  afterEach(async () => {
    for (const t of runtimes.splice(0)) await t.stop();
    remote.dispose();
  });

  it('refuses a committed symlink that leaves the manifests path (even one aiming at the store), reads one that stays inside', async () => {
    const { symlinkSync } = await import('node:fs');
    symlinkSync('../../../../data/bi.sqlite', join(remote.work, 'manifests', 'store.yaml'));
    symlinkSync('../other/ignored.yaml', join(remote.work, 'manifests', 'outside.yaml'));
    symlinkSync('core-models/retail.yaml', join(remote.work, 'manifests', 'alias.yaml'));
    remote.remove('manifests/core-models/retail.yaml');
    remote.write('manifests/.shared/retail.yaml', coreModel('retail', 'Retail'));
    symlinkSync('.shared/retail.yaml', join(remote.work, 'manifests', 'retail.yaml'));
    remote.push('symlinks');
    const t = await start();
    const byKey = new Map(t.rt.reconciler.listStatus().map((r) => [r.key, r]));
    expect(byKey.get('File/store.yaml')).toMatchObject({ phase: 'Invalid', message: 'not a regular file inside the manifests root' });
    expect(byKey.get('File/outside.yaml')).toMatchObject({ phase: 'Invalid', message: 'not a regular file inside the manifests root' });
    // alias.yaml points at a file that is gone: refused like any dangling link.
    expect(byKey.get('File/alias.yaml')).toMatchObject({ phase: 'Invalid' });
    expect(byKey.get('CoreModel/retail')).toMatchObject({ phase: 'Synced', path: 'retail.yaml' });
    expect(byKey.has('Connection/outside')).toBe(false);
  });

  it('clones, applies the manifests folder with the revision, and is ready', async () => {
    const t = await start();
    const rev = remote.remoteHead();
    expect(t.rt.reconciler.ready).toBe(true);
    expect(t.source.revision).toBe(rev);
    const rows = t.rt.reconciler.listStatus();
    expect(rows.map((r) => [r.key, r.phase, r.path, r.lastAppliedRevision, r.lastAttemptedRevision])).toEqual([
      ['Connection/wh', 'Synced', 'connections/wh.yaml', rev, rev],
      ['CoreModel/retail', 'Synced', 'core-models/retail.yaml', rev, rev],
    ]);
    // The poll is armed with the configured interval.
    expect(t.scheduler.delays).toContain(30_000);
  });

  it('applies a push from a second clone on the next poll, only the files that changed', async () => {
    const t = await start();
    const first = remote.remoteHead();
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Warehouse v2'));
    remote.write('manifests/core-models/extra.yaml', coreModel('extra'));
    remote.write('README.md', 'changed outside the manifests folder\n');
    const second = remote.push('second connection title, extra model', 'Grace Hopper <grace@example.com>');

    await t.poll();

    expect(t.source.lastSync).toMatchObject({
      mode: 'delta',
      from: first,
      to: second,
      changed: ['connections/wh.yaml', 'core-models/extra.yaml'],
      removed: [],
    });
    const byKey = new Map(t.rt.reconciler.listStatus().map((r) => [r.key, r]));
    expect(byKey.get('Connection/wh')).toMatchObject({ phase: 'Synced', lastAppliedRevision: second, actor: 'Grace Hopper' });
    expect(byKey.get('CoreModel/extra')).toMatchObject({ phase: 'Synced', lastAppliedRevision: second });
    // Untouched: not re-read, its revision stays the one it was applied at.
    expect(byKey.get('CoreModel/retail')).toMatchObject({ phase: 'Synced', lastAppliedRevision: first });
    const stored = t.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get() as { name: string };
    expect(stored.name).toBe('Warehouse v2');
  });

  it('prunes a file deleted in the remote', async () => {
    const t = await start();
    remote.write('manifests/core-models/extra.yaml', coreModel('extra'));
    remote.push('add extra');
    await t.poll();
    remote.remove('manifests/core-models/extra.yaml');
    const rev = remote.push('remove extra');
    await t.poll();
    expect(t.source.lastSync).toMatchObject({ mode: 'delta', changed: [], removed: ['core-models/extra.yaml'], to: rev });
    expect(t.rt.reconciler.status.get('CoreModel/extra')?.phase).toBe('Pruned');
    expect(t.rt.db.prepare("SELECT COUNT(*) AS n FROM core_models WHERE manifest_key = 'CoreModel/extra'").get()).toEqual({ n: 0 });
  });

  it('a poll with nothing new changes nothing', async () => {
    const t = await start();
    const before = t.rt.reconciler.listStatus();
    await t.poll();
    expect(t.source.lastSync?.mode).toBe('none');
    expect(t.rt.reconciler.listStatus()).toEqual(before);
  });

  it('keeps lastAppliedRevision and lastAttemptedRevision apart when a push breaks a manifest', async () => {
    const t = await start();
    const good = remote.remoteHead();
    remote.write('manifests/connections/wh.yaml', 'kind: Connection\nmetadata: {name: wh}\n');
    const bad = remote.push('break the connection');
    await t.poll();
    const row = t.rt.reconciler.status.get('Connection/wh');
    expect(row?.phase).toBe('Invalid');
    expect(row?.lastAppliedRevision).toBe(good);
    expect(t.source.revision).toBe(bad);
  });

  it('an unreachable remote at start: a clear logged error, retries with backoff, no crash, not ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bi-unreach-'));
    const later = new Remote(dir);
    const t = await start({ url: later.url, noWait: true });
    let done = false;
    void t.started.then(() => (done = true));
    await waitFor(() => t.logs.some((l) => l.includes('cannot sync from the remote')));
    const line = t.logs.find((l) => l.includes('cannot sync from the remote')) ?? '';
    expect(line).toMatch(/ERROR/);
    expect(line).toContain('retryInMs=1000');
    expect(line).toContain(later.bare.split('/').pop() ?? '');
    expect(t.rt.reconciler.ready).toBe(false);
    expect(t.source.lastError).toBeTruthy();
    expect(done).toBe(false);

    // Second attempt still fails: the delay doubles.
    t.scheduler.fireAll();
    await waitFor(() => t.logs.filter((l) => l.includes('cannot sync from the remote')).length === 2);
    expect(t.logs.filter((l) => l.includes('cannot sync')).at(-1)).toContain('retryInMs=2000');

    // The remote appears: the next retry syncs and the poll starts.
    later.init();
    later.write('manifests/core-models/retail.yaml', coreModel('retail'));
    const rev = later.push('first');
    t.scheduler.fireAll();
    await t.started;
    expect(t.rt.reconciler.ready).toBe(true);
    expect(t.source.revision).toBe(rev);
    expect(t.rt.reconciler.status.get('CoreModel/retail')?.phase).toBe('Synced');
    await t.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('stopping while the remote is unreachable ends the start without waiting for the retry', async () => {
    const t = await start({ url: 'file:///nonexistent/bi-controller/remote.git', noWait: true });
    await waitFor(() => t.logs.some((l) => l.includes('cannot sync from the remote')));
    await t.stop();
    await t.started;
    expect(t.rt.reconciler.ready).toBe(false);
  });

  it('restart resumes from the recorded revision: applies what changed while it was down', async () => {
    const t1 = await start();
    const first = remote.remoteHead();
    await t1.stop();
    runtimes.splice(runtimes.indexOf(t1), 1);

    remote.write('manifests/connections/wh.yaml', connection('wh', 'Changed while down'));
    remote.remove('manifests/core-models/retail.yaml');
    remote.write('manifests/core-models/new.yaml', coreModel('new'));
    const second = remote.push('while the controller was down');

    const t2 = await makeGitRuntime({ url: remote.url, dir: t1.dir });
    runtimes.push(t2);
    expect(t2.source.resumedFrom).toBe(first);
    expect(t2.source.lastSync).toMatchObject({
      mode: 'full',
      from: first,
      to: second,
      changed: ['connections/wh.yaml', 'core-models/new.yaml'],
      removed: ['core-models/retail.yaml'],
    });
    const byKey = new Map(t2.rt.reconciler.listStatus().map((r) => [r.key, r]));
    expect(byKey.get('Connection/wh')).toMatchObject({ phase: 'Synced', lastAppliedRevision: second });
    expect(byKey.get('CoreModel/new')).toMatchObject({ phase: 'Synced', lastAppliedRevision: second });
    expect(byKey.get('CoreModel/retail')?.phase).toBe('Pruned');
    expect(t2.source.recordedRevision).toBe(second);
  });

  it('a restart whose recorded revision the clone lacks (history rewritten, clone lost): a full relist, no authors asked', async () => {
    const t1 = await start();
    const first = remote.remoteHead();
    await t1.stop();
    runtimes.splice(runtimes.indexOf(t1), 1);
    // The branch is replaced by an unrelated history and the working clone is gone: nothing has the recorded commit.
    git(remote.work, 'checkout', '--quiet', '--orphan', 'rewritten');
    remote.write('manifests/core-models/new.yaml', coreModel('new'));
    git(remote.work, 'add', '--all');
    git(remote.work, 'commit', '--quiet', '-m', 'rewritten history');
    git(remote.work, 'push', '--quiet', '--force', 'origin', 'HEAD:refs/heads/main');
    const second = remote.head();
    rmSync(join(t1.dir, 'data', 'git'), { recursive: true, force: true });

    const t2 = await makeGitRuntime({ url: remote.url, dir: t1.dir });
    runtimes.push(t2);
    expect(t2.source.lastSync).toMatchObject({ mode: 'full', from: first, to: second, removed: [] });
    expect(t2.source.lastSync?.changed).toContain('core-models/new.yaml');
    expect(t2.rt.reconciler.status.get('CoreModel/new')).toMatchObject({ phase: 'Synced', lastAppliedRevision: second });
  });

  it('a restart with nothing new applies nothing', async () => {
    const t1 = await start();
    const before = t1.rt.reconciler.listStatus();
    const t2 = await t1.restart();
    runtimes.splice(runtimes.indexOf(t1), 1, t2);
    expect(t2.source.lastSync).toMatchObject({ mode: 'full', changed: [], removed: [] });
    expect(t2.rt.reconciler.listStatus()).toEqual(before);
  });

  it('rollback: a revert commit on top of the branch, pushed and applied', async () => {
    const t = await start();
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Bad change'));
    const bad = remote.push('bad change');
    await t.poll();
    expect(t.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get()).toEqual({ name: 'Bad change' });

    const { revert } = await t.source.rollback(bad, { name: 'Ops Person', email: 'ops@example.com' });

    const log = remote.log();
    expect(log).toHaveLength(3); // history kept: initial, bad change, revert
    expect(log[0]).toBe(`${revert}|Ops Person <ops@example.com>|rollback: revert ${bad.slice(0, 12)}`);
    expect(log[1].startsWith(bad)).toBe(true);
    expect(t.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/wh'").get()).toEqual({ name: 'Warehouse' });
    expect(t.rt.reconciler.status.get('Connection/wh')).toMatchObject({ phase: 'Synced', lastAppliedRevision: revert });
  });

  it('rollback of an unknown revision is a NotFoundError and changes nothing', async () => {
    const t = await start();
    const before = remote.log();
    await expect(t.source.rollback('0123456789abcdef0123456789abcdef01234567', { name: 'x', email: 'x@example.com' })).rejects.toThrow(
      'revision 0123456789abcdef0123456789abcdef01234567 not found on main',
    );
    expect(remote.log()).toEqual(before);
  });
});

/** Bounded wait for real git processes (no fixed sleeps). */
export async function waitFor(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
