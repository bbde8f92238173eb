import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GitRepo } from '../../../controller/git/repo.ts';
import { UnavailableError, ValidationError } from '../../../controller/errors.ts';
import { formatIdentity, noreplyEmail, sanitizeName, userIdentity } from '../../../controller/git/identity.ts';
import type { Runtime } from '../../../controller/runtime.ts';
import type { Manifest } from '../../../controller/types.ts';
import { connection, coreModel, git, makeGitRuntime, Remote, warehouseRemote, type GitTestRuntime } from './harness.ts';

const alice = { userId: 'U2026A00001', username: 'alice' };

/** An API write as the use cases make it: the caller recorded, reconciled now, kept even when it fails. */
function submit(rt: Runtime, relPath: string, manifest: Manifest, opts: { actor: { userId: string; username: string }; message: string }) {
  return rt.submitter.submit({ relPath, manifest, caller: { ...opts.actor, role: 'admin', via: 'apiKey' }, message: opts.message, withdrawOnFailure: false });
}

function withdraw(rt: Runtime, relPath: string, opts: { actor: { userId: string; username: string }; message: string }) {
  return rt.submitter.withdraw(relPath, { ...opts.actor, role: 'admin', via: 'apiKey' }, opts.message);
}

describe('GitWriter: API writes as commits', () => {
  let remote: Remote;
  let t: GitTestRuntime;

  beforeEach(async () => {
    remote = warehouseRemote();
    t = await makeGitRuntime({ url: remote.url });
  });
  afterEach(async () => {
    await t.stop();
    remote.dispose();
  });

  it('an API write is one commit in the remote, authored by the caller, with the manifest and the message', async () => {
    const before = remote.log();
    const outcome = await submit(t.rt, 'core-models/retail.yaml', coreModel('retail', 'Retail') as unknown as Manifest, {
      actor: alice,
      message: 'create core model retail',
    });

    const log = remote.log();
    expect(log).toHaveLength(before.length + 1);
    const [sha, author, subject] = log[0].split('|');
    expect(author).toBe('alice <U2026A00001@users.noreply.bi-controller.local>');
    expect(subject).toBe('create core model retail');
    expect(remote.files(sha)).toEqual(['manifests/core-models/retail.yaml']);
    expect(parse(remote.show(sha, 'manifests/core-models/retail.yaml'))).toEqual({
      apiVersion: 'bi.controller/v1',
      kind: 'CoreModel',
      metadata: { name: 'retail', annotations: { 'bi.controller/requested-by': 'U2026A00001' } },
      spec: { name: 'Retail', definition: { columns: ['region'] } },
    });
    // The committer is the controller.
    expect(git(remote.bare, 'log', '-1', '--format=%cn <%ce>', 'main')).toBe('bi-controller <bi-controller@users.noreply.bi-controller.local>');
    expect(outcome).toMatchObject({ key: 'CoreModel/retail', phase: 'Synced' });
    expect(t.rt.reconciler.status.get('CoreModel/retail')).toMatchObject({ lastAppliedRevision: sha, actor: 'U2026A00001' });
  });

  it('writes arriving together are one commit each, by their own authors, pushed together', async () => {
    const pushes = vi.spyOn(GitRepo.prototype, 'push');
    const before = remote.log().length;
    const users = Array.from({ length: 6 }, (_, i) => ({ userId: `U2026A0000${i + 1}`, username: `user${i + 1}` }));
    const outcomes = await Promise.all(
      users.map((u, i) => submit(t.rt, `core-models/m${i}.yaml`, coreModel(`m${i}`) as unknown as Manifest, { actor: u, message: `create core model m${i}` })),
    );
    expect(outcomes.map((o) => o.phase)).toEqual(Array(6).fill('Synced'));
    const log = remote.log().slice(0, 6);
    expect(remote.log()).toHaveLength(before + 6);
    expect(log.map((l) => l.split('|')[1]).sort()).toEqual(users.map((u) => `${u.username} <${u.userId}@users.noreply.bi-controller.local>`).sort());
    for (const line of log) {
      const [sha, , subject] = line.split('|');
      expect(remote.files(sha)).toEqual([`manifests/core-models/${subject.replace('create core model ', '')}.yaml`]);
    }
    // Queued in the same tick, before the writer takes its first batch: one batch, one push.
    expect(pushes.mock.calls.length).toBe(1);
    pushes.mockRestore();
  });

  it("the controller's own commit coming back from the remote is a no-op", async () => {
    await submit(t.rt, 'core-models/retail.yaml', coreModel('retail') as unknown as Manifest, { actor: alice, message: 'create core model retail' });
    const row = t.rt.reconciler.status.get('CoreModel/retail');
    const events: unknown[] = [];
    t.rt.reconciler.on('event', (e) => events.push(e));

    await t.poll();

    expect(t.source.lastSync).toMatchObject({ mode: 'delta', changed: ['core-models/retail.yaml'] });
    expect(events).toEqual([]);
    expect(t.rt.reconciler.status.get('CoreModel/retail')).toEqual(row);
    expect(t.source.revision).toBe(remote.remoteHead());
  });

  it('a remote push racing an API write: both commits end up in the remote, none forced away, both applied', async () => {
    // A human pushes after the controller's last fetch.
    remote.write('manifests/connections/other.yaml', connection('other', 'Pushed by a human'));
    const human = remote.push('human adds a connection');

    await submit(t.rt, 'core-models/retail.yaml', coreModel('retail') as unknown as Manifest, { actor: alice, message: 'create core model retail' });
    await t.source.whenIdle();

    const log = remote.log();
    expect(log.map((l) => l.split('|')[2])).toEqual(['create core model retail', 'human adds a connection', 'initial']);
    expect(log[1].split('|')[0]).toBe(human);
    expect(t.sleeps).toEqual([]); // the first conflict is rebased and pushed at once
    const byKey = new Map(t.rt.reconciler.listStatus().map((r) => [r.key, r.phase]));
    expect(byKey.get('CoreModel/retail')).toBe('Synced');
    expect(byKey.get('Connection/other')).toBe('Synced');
    expect(t.source.revision).toBe(remote.remoteHead());
  });

  it('when the push is refused: 503 (UnavailableError), the clone is reset, nothing applied, no commit in the remote', async () => {
    remote.refusePushes();
    const before = remote.log();
    const cloneHead = git(t.source.repo.dir, 'rev-parse', 'HEAD');

    const err = await submit(t.rt, 'core-models/retail.yaml', coreModel('retail') as unknown as Manifest, { actor: alice, message: 'create core model retail' }).catch(
      (e: unknown) => e,
    );

    expect(err).toBeInstanceOf(UnavailableError);
    expect((err as Error).message).toMatch(/^git: could not push to main after 5 attempts: /);
    expect(t.sleeps).toEqual([200, 400, 800, 1600]);
    expect(remote.log()).toEqual(before);
    expect(git(t.source.repo.dir, 'rev-parse', 'HEAD')).toBe(cloneHead);
    expect(git(t.source.repo.dir, 'status', '--porcelain')).toBe('');
    expect(existsSync(join(t.source.root, 'core-models/retail.yaml'))).toBe(false);
    expect(t.rt.reconciler.status.get('CoreModel/retail')).toBeUndefined();
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM core_models').get()).toEqual({ n: 0 });
  });

  it('withdraw (a failed onboarding) is a commit deleting the file; the remote keeps no manifest', async () => {
    await submit(t.rt, 'core-models/retail.yaml', coreModel('retail') as unknown as Manifest, { actor: alice, message: 'create core model retail' });
    await withdraw(t.rt, 'core-models/retail.yaml', { actor: alice, message: 'withdraw core model retail' });
    const [head] = remote.log();
    expect(head.split('|').slice(1)).toEqual(['alice <U2026A00001@users.noreply.bi-controller.local>', 'withdraw core model retail']);
    expect(git(remote.bare, 'ls-tree', '-r', '--name-only', 'main')).toBe('manifests/connections/wh.yaml');
    expect(t.rt.reconciler.status.get('CoreModel/retail')?.phase).toBe('Pruned');
  });

  it('writing the same content twice makes no second commit', async () => {
    const m = coreModel('retail') as unknown as Manifest;
    await submit(t.rt, 'core-models/retail.yaml', m, { actor: alice, message: 'create' });
    const after = remote.log();
    await submit(t.rt, 'core-models/retail.yaml', m, { actor: alice, message: 'create again' });
    expect(remote.log()).toEqual(after);
  });

  it('refuses a path outside the manifests folder before touching the clone', async () => {
    const before = remote.log();
    await expect(
      t.rt.writer.write('../escape.yaml', 'x', { actor: alice, message: 'escape' }),
    ).rejects.toBeInstanceOf(ValidationError);
    expect(remote.log()).toEqual(before);
  });

  it('API writes and polls never interleave on the clone', async () => {
    remote.write('manifests/connections/p.yaml', connection('p'));
    remote.push('human');
    const writes = Array.from({ length: 3 }, (_, i) =>
      submit(t.rt, `core-models/m${i}.yaml`, coreModel(`m${i}`) as unknown as Manifest, { actor: alice, message: `create m${i}` }),
    );
    const polls = [t.source.sync(), t.source.sync({ full: true })];
    await Promise.all([...writes, ...polls]);
    await t.source.whenIdle();
    const subjects = remote.log().map((l) => l.split('|')[2]);
    expect(subjects.slice(0, 3).sort()).toEqual(['create m0', 'create m1', 'create m2']);
    expect(subjects.slice(3)).toEqual(['human', 'initial']);
    expect(t.rt.reconciler.listStatus({ phase: 'Synced' }).map((r) => r.key)).toEqual([
      'Connection/p',
      'Connection/wh',
      'CoreModel/m0',
      'CoreModel/m1',
      'CoreModel/m2',
    ]);
    expect(readFileSync(join(t.source.root, 'connections/p.yaml'), 'utf8')).toContain('kind: Connection');
  });
});

describe('commit identities', () => {
  it('strips what could inject commit headers or break the address', () => {
    expect(sanitizeName('evil\nCommitter: x <y>')).toBe('evil Committer: x y');
    expect(sanitizeName('<>\n')).toBe('unknown');
    expect(noreplyEmail('U2026A00001')).toBe('U2026A00001@users.noreply.bi-controller.local');
    expect(noreplyEmail('a b>\n<c')).toBe('a-b-c@users.noreply.bi-controller.local');
    expect(formatIdentity(userIdentity({ userId: 'U1', username: 'Ann <root@x>\nX' }))).toBe('Ann root@x X <U1@users.noreply.bi-controller.local>');
  });
});
