import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_IMPORT_ARGS, importedTip, importStream, type ImportCommit } from '../../../controller/git/fast-import.ts';
import { delta } from '../../../controller/git/pack.ts';
import { GitRepo, STAGING_REF } from '../../../controller/git/repo.ts';
import { git } from './harness.ts';

const committer = { name: 'bi-controller', email: 'bot@example.com' };
const ann = { name: 'Ann <x>', email: 'ann@example.com' };
const bob = { name: 'Zoë', email: 'z@example.com' };
const c = (path: string, content: string | null, author = ann, message = `write ${path}`): ImportCommit => ({ author, message, path, content });

/** Batches that touch the same folders over and over, nested and new ones, removals that empty a folder, git's order of `a.b` before folder `a`. */
const BATCHES: ImportCommit[][] = [
  [
    c('manifests/dashboards/b.yaml', 'b: 1\n'),
    c('manifests/dashboards/a.yaml', 'a: ü\n', bob, 'create ü\n\nbody line'),
    c('manifests/a.b', 'x\n'),
    c('manifests/a/z.yaml', 'z\n'),
    c('top.txt', 'top\n'),
    c(`manifests/dashboards/${'n'.repeat(200)}.yaml`, 'long name\n'.repeat(50)),
  ],
  [
    c('manifests/dashboards/b.yaml', 'b: 2\n'),
    c('manifests/a/z.yaml', null),
    c('manifests/dashboards/c.yaml', 'c\n'),
    c('top.txt', null),
    c('manifests/pipelines/p.yaml', 'p\n'),
  ],
  [c('manifests/a.b', null), c('manifests/a.b/inside.yaml', 'a folder where a file was\n'), c('manifests/dashboards/a.yaml', null)],
];

describe('GitRepo.importCommits: a batch built in this process as one pack', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  function repoDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'bi-pack-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    return dir;
  }

  const packs = (dir: string) => readdirSync(join(dir, '.git', 'objects', 'pack')).filter((f) => f.endsWith('.pack'));
  const trees = (dir: string, tip: string) => git(dir, 'log', '--format=%T %an <%ae>|%cn|%B', tip);

  it('makes the same trees, authors and messages as git fast-import; fsck --strict and verify-pack pass; one pack per batch, no loose object', async () => {
    const ours = repoDir();
    const theirs = repoDir();
    const repo = new GitRepo({ dir: ours, url: 'file:///nowhere', branch: 'main', committer });
    let tip: string | null = null;
    let expected: string | null = null;
    for (const [i, batch] of BATCHES.entries()) {
      tip = await repo.importCommits(tip, batch, i % 2);
      expected = importedTip(execFileSync('git', FAST_IMPORT_ARGS, { cwd: theirs, input: importStream(batch, STAGING_REF, expected, committer), encoding: 'utf8' }));
      expect(git(ours, 'rev-parse', `${i % 2 ? `${STAGING_REF}-1` : STAGING_REF}`)).toBe(tip);
      expect(trees(ours, tip)).toBe(trees(theirs, expected));
    }
    expect(git(ours, 'rev-list', '--count', tip!)).toBe(String(BATCHES.flat().length));
    expect(git(ours, 'show', `${tip}:manifests/a.b/inside.yaml`)).toBe('a folder where a file was');
    git(ours, 'fsck', '--strict', '--no-dangling');
    expect(packs(ours)).toHaveLength(BATCHES.length);
    for (const pack of packs(ours)) git(ours, 'verify-pack', join('.git', 'objects', 'pack', pack));
    expect(git(ours, 'count-objects', '-v')).toMatch(/^count: 0$/m);
    // Changed trees are stored as deltas on their version earlier in the pack.
    const verbose = git(ours, 'verify-pack', '-v', join('.git', 'objects', 'pack', packs(ours)[0]));
    expect(verbose).toMatch(/chain length = 1: \d+ objects?/);
  });

  it('builds on a commit it did not build (trees read from git) and on one it did, alike', async () => {
    const dir = repoDir();
    const theirs = repoDir();
    const first = importedTip(execFileSync('git', FAST_IMPORT_ARGS, { cwd: dir, input: importStream(BATCHES[0], STAGING_REF, null, committer), encoding: 'utf8' }));
    // Built at another moment: its commit id may differ from `first`, its trees do not.
    const theirFirst = importedTip(execFileSync('git', FAST_IMPORT_ARGS, { cwd: theirs, input: importStream(BATCHES[0], STAGING_REF, null, committer), encoding: 'utf8' }));
    const repo = new GitRepo({ dir, url: 'file:///nowhere', branch: 'main', committer });
    const second = await repo.importCommits(first, BATCHES[1]);
    const third = await repo.importCommits(second, BATCHES[2], 1);
    let expected = importedTip(execFileSync('git', FAST_IMPORT_ARGS, { cwd: theirs, input: importStream(BATCHES[1], STAGING_REF, theirFirst, committer), encoding: 'utf8' }));
    expected = importedTip(execFileSync('git', FAST_IMPORT_ARGS, { cwd: theirs, input: importStream(BATCHES[2], STAGING_REF, expected, committer), encoding: 'utf8' }));
    expect(trees(dir, third)).toBe(trees(theirs, expected));
    git(dir, 'fsck', '--strict', '--no-dangling');
  });

  it("a batch of 64 commits in one folder keeps its delta chains within git's default depth (50)", async () => {
    const dir = repoDir();
    const repo = new GitRepo({ dir, url: 'file:///nowhere', branch: 'main', committer });
    const tip = await repo.importCommits(null, Array.from({ length: 64 }, (_, i) => c(`m/d/f-${i}.yaml`, `${i}\n`)));
    git(dir, 'fsck', '--strict', '--no-dangling');
    const verbose = git(dir, 'verify-pack', '-v', join('.git', 'objects', 'pack', packs(dir)[0]));
    const depths = [...verbose.matchAll(/^chain length = (\d+):/gm)].map((m) => Number(m[1]));
    expect(Math.max(...depths)).toBe(50);
    expect(git(dir, 'ls-tree', '--name-only', `${tip}:m/d`).split('\n')).toHaveLength(64);
  });

  it('a ref lock held by another writer fails the batch, as git would', async () => {
    const dir = repoDir();
    const repo = new GitRepo({ dir, url: 'file:///nowhere', branch: 'main', committer });
    await repo.importCommits(null, [c('a.yaml', 'a\n')]);
    execFileSync('touch', [join(dir, '.git', STAGING_REF) + '.lock']);
    await expect(repo.importCommits(null, [c('a.yaml', 'b\n')])).rejects.toThrow(/EEXIST/);
  });
});

describe('delta', () => {
  it('copies the common start and end and inserts the rest in pieces of at most 127 bytes', () => {
    const from = Buffer.from('head-middle-tail');
    const to = Buffer.from(`head-${'x'.repeat(300)}-tail`);
    const d = delta(from, to);
    // sizes (16; 310 in two bytes), copy 5 from 0 (op, size), 3 inserts (127 + 127 + 46, each with its length), copy 5 from 11 (op, offset, size)
    expect([...d.subarray(0, 5)]).toEqual([16, 0xb6, 0x02, 0x90, 5]);
    expect(d.length).toBe(3 + 2 + 3 + 300 + 3);
    expect([...d.subarray(-3)]).toEqual([0x91, 11, 5]);
  });
});
