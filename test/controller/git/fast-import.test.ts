import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAST_IMPORT_ARGS, importedTip, importStream, quotePath } from '../../../controller/git/fast-import.ts';
import { STAGING_REF } from '../../../controller/git/repo.ts';
import { git } from './harness.ts';

const committer = { name: 'bi-controller', email: 'bot@example.com' };

describe('importStream: commits built by git fast-import', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));

  function run(dir: string, stream: Buffer): string {
    return importedTip(execFileSync('git', FAST_IMPORT_ARGS, { cwd: dir, input: stream, encoding: 'utf8' }));
  }

  it('one commit per entry, in order, with its author, message (multi-byte, several lines) and file; a later one removes a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bi-fi-'));
    dirs.push(dir);
    git(dir, 'init', '--quiet', '--initial-branch=main');
    const path = 'manifests/dash boards/"Ümlaut"\\x.yaml';
    const first = run(dir, importStream([
      { author: { name: 'Zoë', email: 'z@example.com' }, message: 'create ü\n\nbody line', path, content: 'a: ü\n' },
      { author: { name: 'Bob', email: 'b@example.com' }, message: 'second', path: 'manifests/b.yaml', content: 'b: 1\n' },
    ], STAGING_REF, null, committer));
    expect(git(dir, 'log', '--format=%an <%ae>|%cn|%B', first).split('\n').filter(Boolean)).toEqual([
      'Bob <b@example.com>|bi-controller|second',
      'Zoë <z@example.com>|bi-controller|create ü',
      'body line',
    ]);
    expect(git(dir, 'rev-list', '--count', first)).toBe('2');
    expect(git(dir, '-c', 'core.quotepath=off', 'show', `${first}:${path}`)).toBe('a: ü');

    const second = run(dir, importStream([{ author: { name: 'Bob', email: 'b@example.com' }, message: 'remove', path, content: null }], STAGING_REF, first, committer));
    expect(git(dir, 'rev-parse', `${second}^`)).toBe(first);
    expect(git(dir, 'ls-tree', '-r', '--name-only', second)).toBe('manifests/b.yaml');
  });

  it('quotes paths C-style', () => {
    expect(quotePath('a b/"c"\\d\ne')).toBe('"a b/\\"c\\"\\\\d\\012e"');
  });
});
