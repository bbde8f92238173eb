import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConflictError } from '../../../controller/errors.ts';
import { WriterLock } from '../../../controller/git/lock.ts';
import { GitRepo } from '../../../controller/git/repo.ts';
import { GitWriter } from '../../../controller/writers/git.ts';
import type { Runtime } from '../../../controller/runtime.ts';
import type { Manifest } from '../../../controller/types.ts';
import { connection, coreModel, git, makeGitRuntime, Remote, warehouseRemote, type GitTestRuntime } from './harness.ts';

type Actor = { userId: string; username: string };

function submit(rt: Runtime, relPath: string, manifest: unknown, actor: Actor, message: string, withdrawOnFailure = false) {
  return rt.submitter.submit({ relPath, manifest: manifest as Manifest, caller: { ...actor, role: 'admin', via: 'apiKey' }, message, withdrawOnFailure });
}

const user = (i: number): Actor => ({ userId: `U2026B${String(i).padStart(5, '0')}`, username: `user ${i}` });
const author = (a: Actor) => `${a.username} <${a.userId}@users.noreply.bi-controller.local>`;

/** Spies on pushes; the first one waits at a gate until `release()` (`atPush` resolves when it got there). */
function holdFirstPush() {
  const push = GitRepo.prototype.push;
  let reached!: () => void;
  let release!: () => void;
  const atPush = new Promise<void>((resolve) => (reached = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const pushes = vi.spyOn(GitRepo.prototype, 'push').mockImplementationOnce(async function (this: GitRepo, rev?: string) {
    reached();
    await gate;
    return push.call(this, rev);
  });
  return { pushes, atPush, release };
}

describe('GitWriter: a burst of writes is committed in batches (one fast-import, one push each)', () => {
  let remote: Remote;
  let t: GitTestRuntime;

  beforeEach(async () => {
    remote = warehouseRemote();
    t = await makeGitRuntime({ url: remote.url });
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await t.stop();
    remote.dispose();
  });

  it('50 concurrent writes: 50 commits, each with its own author, message and file; the 49 queued during the first push go in one more; nothing lost', async () => {
    // The first push is held until the other 49 writes are queued: how the writes spread in time is fixed by the test, not by the machine's load.
    const { pushes, atPush, release } = holdFirstPush();
    const imports = vi.spyOn(GitRepo.prototype, 'importCommits');
    const users = Array.from({ length: 50 }, (_, i) => user(i));
    const write = (i: number) => submit(t.rt, `core-models/m${i}.yaml`, coreModel(`m${i}`, `Model ${i}`), users[i], `create core model m${i}`);

    const first = write(0);
    await atPush;
    const rest = users.slice(1).map((_, i) => write(i + 1));
    release();
    const outcomes = await Promise.all([first, ...rest]);

    expect(outcomes.map((o) => o.phase)).toEqual(Array(50).fill('Synced'));
    const log = remote.log();
    expect(log).toHaveLength(51);
    const bySubject = new Map(log.slice(0, 50).map((l) => [l.split('|')[2], l.split('|')]));
    users.forEach((u, i) => {
      const [sha, who] = bySubject.get(`create core model m${i}`) ?? [];
      expect(who).toBe(author(u));
      expect(remote.files(sha)).toEqual([`manifests/core-models/m${i}.yaml`]);
      expect(parse(remote.show(sha, `manifests/core-models/m${i}.yaml`)).spec.name).toBe(`Model ${i}`);
    });
    // A linear history on top of the initial commit, built by a few processes, not 50.
    expect(git(remote.bare, 'rev-list', '--merges', '--count', 'main')).toBe('0');
    // The first write alone, then the 49 queued while it was pushed: built together on top of it, one push.
    expect(pushes.mock.calls.length).toBe(2);
    expect(imports.mock.calls.map(([, commits]) => commits.length)).toEqual([1, 49]);
    // The clone is on the pushed head, its working tree and index clean, every file in place.
    const clone = t.source.repo.dir;
    expect(git(clone, 'rev-parse', 'HEAD')).toBe(remote.remoteHead());
    expect(git(clone, 'status', '--porcelain')).toBe('');
    expect(parse(readFileSync(join(t.source.root, 'core-models/m49.yaml'), 'utf8')).spec.name).toBe('Model 49');
  });

  it('the remote moved meanwhile: the batch goes on top (no force), a write to a file the remote changed fails with 409', async () => {
    // A human pushes after the controller's last fetch: a new connection, and an edit of wh.
    remote.write('manifests/connections/other.yaml', connection('other', 'Pushed by a human'));
    remote.write('manifests/connections/wh.yaml', connection('wh', 'Edited by a human'));
    const human = remote.push('human edits wh');
    const users = Array.from({ length: 4 }, (_, i) => user(i));

    const results = await Promise.allSettled([
      ...users.map((u, i) => submit(t.rt, `core-models/m${i}.yaml`, coreModel(`m${i}`), u, `create core model m${i}`)),
      submit(t.rt, 'connections/wh.yaml', connection('wh', 'Written through the API'), user(9), 'update connection wh'),
    ]);
    await t.source.whenIdle();

    expect(results.slice(0, 4).map((r) => r.status === 'fulfilled' && r.value.phase)).toEqual(Array(4).fill('Synced'));
    const refused = results[4];
    expect(refused.status).toBe('rejected');
    expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
    expect(String((refused as PromiseRejectedResult).reason.message)).toMatch(/connections\/wh\.yaml was changed on main by another commit meanwhile/);
    const subjects = remote.log().map((l) => l.split('|')[2]);
    expect(subjects.slice(0, 4).sort()).toEqual(['create core model m0', 'create core model m1', 'create core model m2', 'create core model m3']);
    expect(subjects.slice(4)).toEqual(['human edits wh', 'initial']);
    expect(git(remote.bare, 'merge-base', '--is-ancestor', human, 'main')).toBe('');
    expect(parse(remote.show('main', 'manifests/connections/wh.yaml')).spec.name).toBe('Edited by a human');
    // The foreign commit is synced as well; the clone ends on the remote head.
    expect(t.rt.reconciler.status.get('Connection/other')?.phase).toBe('Synced');
    expect(t.source.revision).toBe(remote.remoteHead());
    expect(git(t.source.repo.dir, 'status', '--porcelain')).toBe('');
  });

  it('a write that fails to apply is withdrawn by its own commit; its batch neighbours stay', async () => {
    const users = Array.from({ length: 4 }, (_, i) => user(i));
    const bad = user(7);

    const outcomes = await Promise.all([
      ...users.map((u, i) => submit(t.rt, `core-models/m${i}.yaml`, coreModel(`m${i}`), u, `create core model m${i}`, true)),
      submit(t.rt, 'core-models/bad.yaml', { apiVersion: 'bi.controller/v1', kind: 'CoreModel', metadata: { name: 'bad' }, spec: {} }, bad, 'create core model bad', true),
    ]);

    expect(outcomes.slice(0, 4).map((o) => o.phase)).toEqual(Array(4).fill('Synced'));
    expect(outcomes[4].phase).not.toBe('Synced');
    const log = remote.log().map((l) => l.split('|'));
    const withdrawn = log.find(([, , s]) => s.startsWith('withdraw CoreModel bad'));
    const created = log.find(([, , s]) => s === 'create core model bad');
    expect(withdrawn?.[1]).toBe(author(bad));
    expect(created?.[1]).toBe(author(bad));
    expect(remote.files(withdrawn?.[0] ?? '')).toEqual(['manifests/core-models/bad.yaml']);
    expect(log.indexOf(withdrawn ?? [])).toBeLessThan(log.indexOf(created ?? []));
    expect(git(remote.bare, 'ls-tree', '-r', '--name-only', 'main').split('\n').sort()).toEqual([
      'manifests/connections/wh.yaml',
      'manifests/core-models/m0.yaml',
      'manifests/core-models/m1.yaml',
      'manifests/core-models/m2.yaml',
      'manifests/core-models/m3.yaml',
    ]);
    expect(t.rt.reconciler.listStatus({ phase: 'Synced' }).map((r) => r.key)).toEqual(['Connection/wh', 'CoreModel/m0', 'CoreModel/m1', 'CoreModel/m2', 'CoreModel/m3']);
  });

  it('two writes of one file in the same batch: two commits in order, the second one wins; a repeat makes none', async () => {
    const a = user(1);
    const b = user(2);
    await Promise.all([
      submit(t.rt, 'core-models/x.yaml', coreModel('x', 'First'), a, 'first'),
      submit(t.rt, 'core-models/x.yaml', coreModel('x', 'Second'), b, 'second'),
      submit(t.rt, 'core-models/x.yaml', coreModel('x', 'Second'), b, 'second again'),
    ]);
    const log = remote.log().map((l) => l.split('|'));
    expect(log.map(([, who, s]) => `${who}|${s}`)).toEqual([`${author(b)}|second`, `${author(a)}|first`, 'Hanna Human <hanna@example.com>|initial']);
    expect(parse(remote.show('main', 'manifests/core-models/x.yaml')).spec.name).toBe('Second');
  });
});

describe('GitWriter: group commit', () => {
  let remote: Remote;
  /** Writers of the test: answered writes may still be checking out; the folder goes only after. */
  const writers: GitWriter[] = [];
  afterEach(async () => {
    await Promise.all(writers.splice(0).map((w) => w.settle()));
    vi.restoreAllMocks();
    remote.dispose();
  });

  async function makeWriter(attempts = 5) {
    const repo = new GitRepo({ dir: join(remote.root, 'clone'), url: remote.url, branch: 'main', committer: { name: 'bot', email: 'bot@example.com' } });
    // Where the source's first sync leaves the clone.
    await repo.ensure();
    await repo.resetTo(await repo.fetch());
    const lock = new WriterLock();
    const writer = new GitWriter({ repo, lock, root: join(remote.root, 'clone', 'manifests'), path: 'manifests', sleep: async () => {}, attempts });
    writers.push(writer);
    const write = (i: number) => writer.write(`m/${i}.yaml`, `i: ${i}\n`, { actor: user(i), message: `write ${i}` });
    return { repo, writer, write, lock };
  }

  /** A writer on a fresh remote whose gathering wait is the test's own (`wait`, for up to 5 ms). */
  function gatheringWriter(wait: (ms: number) => Promise<void>) {
    remote = new Remote().init();
    const repo = new GitRepo({ dir: join(remote.root, 'clone'), url: remote.url, branch: 'main', committer: { name: 'bot', email: 'bot@example.com' } });
    const writer = new GitWriter({ repo, lock: new WriterLock(), root: join(remote.root, 'clone', 'manifests'), path: 'manifests', sleep: async () => {}, gather: { maxMs: 5, wait } });
    writers.push(writer);
    const write = (i: number) => writer.write(`m/${i}.yaml`, `i: ${i}\n`, { actor: user(i), message: `write ${i}` });
    return { writer, write };
  }

  it('answers a batch once pushed, before the clone is moved onto it; later writes see what was pushed; the lock waits for the move', async () => {
    remote = new Remote().init();
    remote.write('manifests/keep.yaml', 'k: 1\n');
    remote.push('initial');
    const { writer, write, lock } = await makeWriter();
    const clone = join(remote.root, 'clone');
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const realAdvance = GitRepo.prototype.advanceTo;
    const moves = vi.spyOn(GitRepo.prototype, 'advanceTo').mockImplementation(async function (this: GitRepo, rev) {
      await gate;
      return realAdvance.call(this, rev);
    });

    await write(0); // answered while its move waits at the gate
    expect(moves).toHaveBeenCalledTimes(1);
    expect(existsSync(join(clone, 'manifests', 'm', '0.yaml'))).toBe(false);
    expect(await writer.exists('m/0.yaml')).toBe(true);
    // Removing the file just pushed is a commit, though the working tree does not have it yet.
    await writer.remove('m/0.yaml', { actor: user(1), message: 'remove 0' });
    expect(await writer.exists('m/0.yaml')).toBe(false);
    expect(remote.log().map((l) => l.split('|')[2])).toEqual(['remove 0', 'write 0', 'initial']);

    let synced = false;
    const sync = lock.run(async () => {
      synced = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(synced).toBe(false); // a sync never sees the clone half moved
    open();
    await sync;
    expect(git(clone, 'rev-parse', 'HEAD')).toBe(remote.remoteHead());
    expect(git(clone, 'status', '--porcelain')).toBe('');
  });

  /** Makes the first push wait until the next batch has been built on top of it (writes 3–5 queued meanwhile), then run `then`. */
  function firstPushBuildsAhead(write: (i: number) => Promise<unknown>, then: () => Promise<void>) {
    const realImport = GitRepo.prototype.importCommits;
    const realPush = GitRepo.prototype.push;
    const bases: (string | null)[] = [];
    const tips: string[] = [];
    let builtAhead: () => void = () => {};
    const ahead = new Promise<void>((resolve) => (builtAhead = resolve));
    vi.spyOn(GitRepo.prototype, 'importCommits').mockImplementation(async function (this: GitRepo, base, commits, slot) {
      bases.push(base);
      const tip = await realImport.call(this, base, commits, slot);
      tips.push(tip);
      if (bases.length === 2) builtAhead();
      return tip;
    });
    const later: Promise<unknown>[] = [];
    let first = true;
    vi.spyOn(GitRepo.prototype, 'push').mockImplementation(async function (this: GitRepo, rev) {
      if (!first) return realPush.call(this, rev);
      first = false;
      later.push(...[3, 4, 5].map((i) => write(i).catch((e: unknown) => e)));
      await ahead;
      return then.call(this).then(() => realPush.call(this, rev));
    });
    return { bases, tips, later };
  }

  it('while a batch is pushed, the next one is built on top of it (one fast-import each) and pushed right after', async () => {
    remote = new Remote().init();
    remote.write('manifests/keep.yaml', 'k: 1\n');
    const initial = remote.push('initial');
    const { write } = await makeWriter();
    const { bases, tips, later } = firstPushBuildsAhead(write, async () => {});

    await Promise.all([write(0), write(1), write(2)]);
    await Promise.all(later);

    expect(bases).toEqual([initial, tips[0]]);
    expect(remote.log().map((l) => l.split('|')[2])).toEqual(['write 5', 'write 4', 'write 3', 'write 2', 'write 1', 'write 0', 'initial']);
    expect(remote.remoteHead()).toBe(tips[1]);
    expect(git(join(remote.root, 'clone'), 'status', '--porcelain')).toBe('');
  });

  it('a batch built on one whose push then fails is built again on the head: nothing of the failed batch gets in', async () => {
    remote = new Remote().init();
    remote.write('manifests/keep.yaml', 'k: 1\n');
    const initial = remote.push('initial');
    const { write } = await makeWriter(1);
    const { bases, tips, later } = firstPushBuildsAhead(write, async () => {
      throw new Error('fatal: the remote hung up unexpectedly');
    });

    const failed = await Promise.allSettled([write(0), write(1), write(2)]);
    const done = await Promise.all(later);

    expect(failed.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(done.filter((r) => r instanceof Error)).toEqual([]);
    expect(bases).toEqual([initial, tips[0], initial]);
    expect(remote.log().map((l) => l.split('|')[2])).toEqual(['write 5', 'write 4', 'write 3', 'initial']);
    expect(git(remote.bare, 'ls-tree', '-r', '--name-only', 'main').split('\n')).toEqual(['manifests/keep.yaml', 'manifests/m/3.yaml', 'manifests/m/4.yaml', 'manifests/m/5.yaml']);
    expect(git(join(remote.root, 'clone'), 'status', '--porcelain')).toBe('');
  });

  it("a burst's stragglers join the next batch instead of a write going alone; the wait ends as soon as they are queued", async () => {
    const waits: number[] = [];
    let never: Promise<void> | undefined;
    // The gathering timer never fires here: only the stragglers arriving can end the wait.
    const { write } = gatheringWriter((ms) => (waits.push(ms), (never ??= new Promise<void>(() => {}))));
    const pushes = vi.spyOn(GitRepo.prototype, 'push');

    await Promise.all([write(0), write(1), write(2)]);
    const first = write(3);
    await new Promise((resolve) => setImmediate(resolve));
    expect(waits).toEqual([5]); // 1 queued, the last batch had 3: it waits for the rest
    await Promise.all([first, write(4), write(5)]);

    expect(pushes.mock.calls.length).toBe(2);
    expect(remote.log().map((l) => l.split('|')[2])).toEqual(['write 5', 'write 4', 'write 3', 'write 2', 'write 1', 'write 0']);
  });

  it('the callers a push answered join the writes queued during it: one batch, not two halves alternating (each paying a push)', async () => {
    const waits: number[] = [];
    let gathering!: () => void;
    const gathered = new Promise<void>((resolve) => (gathering = resolve));
    // The gathering timer never fires here: only the writes arriving can end the wait.
    const { write } = gatheringWriter((ms) => (waits.push(ms), gathering(), new Promise<void>(() => {})));
    const { pushes, atPush, release } = holdFirstPush();
    const imports = vi.spyOn(GitRepo.prototype, 'importCommits');

    const first = [write(0), write(1), write(2)];
    await atPush;
    // Two writers arrive while the first batch is pushed: fewer than it holds, so nothing is built ahead.
    const during = [write(3), write(4)];
    release();
    await Promise.all(first);
    await gathered;
    expect(waits).toEqual([5]); // 2 queued; the 3 answered are expected back
    // They come back one by one (a turn of the event loop apart): the batch waits for all three.
    const back: Promise<unknown>[] = [];
    for (const i of [5, 6, 7]) {
      back.push(write(i));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all([...during, ...back]);

    expect(pushes.mock.calls.length).toBe(2);
    expect(imports.mock.calls.map(([, commits]) => commits.length)).toEqual([3, 5]);
    expect(remote.log().map((l) => l.split('|')[2])).toEqual(['write 7', 'write 6', 'write 5', 'write 4', 'write 3', 'write 2', 'write 1', 'write 0']);
  });
});
