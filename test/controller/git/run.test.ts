import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { GitCommandError, runGit } from '../../../controller/git/run.ts';
import { gitEnv } from '../../../controller/git/repo.ts';

/** A git command whose helper (the "ssh" it starts) never answers; the marker names its process. */
function hangingLsRemote(marker: string) {
  const env = { ...gitEnv(process.env), GIT_SSH_COMMAND: `sh -c 'sleep 30; exit 0 # ${marker}' --` };
  return { args: ['ls-remote', 'ssh://example.invalid/repo.git'], env };
}

function running(marker: string): boolean {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).trim() !== '';
  } catch {
    return false;
  }
}

describe('runGit', () => {
  const dirs: string[] = [];
  afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
  const cwd = () => {
    const d = mkdtempSync(join(tmpdir(), 'bi-rungit-'));
    dirs.push(d);
    return d;
  };

  it('resolves to stdout, feeds stdin, and rejects with what git printed', async () => {
    const dir = cwd();
    await runGit(['init', '--quiet'], { cwd: dir, env: gitEnv(process.env), silenceMs: 30_000 });
    const sha = await runGit(['hash-object', '--stdin'], { cwd: dir, env: gitEnv(process.env), silenceMs: 30_000, input: 'hello\n' });
    expect(sha.trim()).toBe('ce013625030ba8dba906f756967f9e9ca394464a');
    const err = await runGit(['rev-parse', '--verify', 'nope'], { cwd: dir, env: gitEnv(process.env), silenceMs: 30_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitCommandError);
    expect((err as Error).message).toMatch(/fatal: Needed a single revision/);
  });

  it('an abort kills git and the helpers it started, and settles at once', async () => {
    const marker = `bi-rungit-abort-${process.pid}`;
    const { args, env } = hangingLsRemote(marker);
    const abort = new AbortController();
    const run = runGit(args, { cwd: cwd(), env, silenceMs: 60_000, signal: abort.signal }).catch((e: unknown) => e);
    for (let i = 0; i < 200 && !running(marker); i++) await new Promise((r) => setImmediate(r));
    expect(running(marker)).toBe(true);
    abort.abort();
    const err = await run;
    expect((err as Error).message).toMatch(/aborted/);
    // The helper was in git's process group: it is gone too.
    for (let i = 0; i < 200 && running(marker); i++) await new Promise((r) => setImmediate(r));
    expect(running(marker)).toBe(false);
  });
});
