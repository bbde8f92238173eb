import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { packedRef, readRefFromFiles } from '../../../controller/git/ref-files.ts';

/** Refs read from the clone's files must say what `git rev-parse` says, or nothing (the caller then asks git). */
describe('refs read from files', () => {
  let dir: string;
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, encoding: 'utf8' }).trim();
  const commit = (file: string) => {
    writeFileSync(join(dir, file), file);
    git('add', file);
    git('commit', '-q', '-m', file);
    return git('rev-parse', 'HEAD');
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-refs-'));
    git('init', '-q', '-b', 'main');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('an unborn branch is left to git', () => {
    expect(readRefFromFiles(dir, 'HEAD')).toBeUndefined();
  });

  it('HEAD and branches, loose and packed, as git reads them', () => {
    const first = commit('a');
    expect(readRefFromFiles(dir, 'HEAD')).toBe(first);
    expect(readRefFromFiles(dir, 'refs/heads/main')).toBe(first);
    git('update-ref', 'refs/remotes/origin/main', first);
    git('pack-refs', '--all');
    expect(readRefFromFiles(dir, 'refs/remotes/origin/main')).toBe(first);
    expect(readRefFromFiles(dir, 'HEAD')).toBe(first);
    // A loose ref written after packing wins over the packed one.
    const second = commit('b');
    expect(readRefFromFiles(dir, 'HEAD')).toBe(second);
    expect(git('rev-parse', 'refs/heads/main')).toBe(second);
    git('checkout', '-q', '--detach', first);
    expect(readRefFromFiles(dir, 'HEAD')).toBe(first);
  });

  it('anything the files cannot settle is left to git', () => {
    const id = commit('a');
    expect(readRefFromFiles(dir, 'main')).toBeUndefined();
    expect(readRefFromFiles(dir, 'HEAD~1')).toBeUndefined();
    expect(readRefFromFiles(dir, 'refs/heads/../../HEAD')).toBeUndefined();
    expect(readRefFromFiles(dir, id)).toBeUndefined();
    expect(readRefFromFiles(dir, 'refs/heads/none')).toBeUndefined();
    git('symbolic-ref', 'refs/heads/alias', 'refs/heads/main');
    expect(readRefFromFiles(dir, 'refs/heads/alias')).toBeUndefined();
    git('tag', '-a', '-m', 'v1', 'v1');
    git('pack-refs', '--all');
    expect(readRefFromFiles(dir, 'refs/tags/v1')).toBeUndefined();
    expect(readRefFromFiles(join(dir, 'missing'), 'HEAD')).toBeUndefined();
  });

  it('packed-refs lines', () => {
    const a = 'a'.repeat(40);
    const b = 'b'.repeat(40);
    const text = `# pack-refs with: peeled fully-peeled sorted\n${a} refs/heads/main\n${b} refs/tags/v1\n^${a}\n`;
    expect(packedRef(text, 'refs/heads/main')).toBe(a);
    expect(packedRef(text, 'refs/tags/v1')).toBeUndefined();
    expect(packedRef(text, 'refs/heads/other')).toBeUndefined();
    expect(packedRef(undefined, 'refs/heads/main')).toBeUndefined();
  });
});
