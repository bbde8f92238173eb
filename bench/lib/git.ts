import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const GIT_IDENTITY = ['-c', 'user.name=bench seed', '-c', 'user.email=seed@bench.invalid', '-c', 'commit.gpgsign=false'];

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', [...GIT_IDENTITY, ...args], { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

/**
 * A bare repository under `dir` (branch main) seeded with one commit holding `files`
 * (relative path → text). Returns its `file://` URL, as BI_GIT_URL takes it.
 */
export function createSeededBareRepo(dir: string, files: Record<string, string>): { url: string; bare: string } {
  const bare = join(dir, 'remote.git');
  const seed = join(dir, 'seed');
  mkdirSync(bare, { recursive: true });
  mkdirSync(seed, { recursive: true });
  git(bare, 'init', '--bare', '--initial-branch=main');
  git(seed, 'init', '--initial-branch=main');
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(seed, rel)), { recursive: true });
    writeFileSync(join(seed, rel), text);
  }
  git(seed, 'add', '-A');
  git(seed, 'commit', '-m', 'seed: prerequisites');
  git(seed, 'remote', 'add', 'origin', bare);
  git(seed, 'push', 'origin', 'main');
  return { url: pathToFileURL(bare).href, bare };
}

/** `git log` of the bare repository: one line per commit, `author <email>|subject`. */
export function gitLog(bare: string, format = '%an <%ae>|%s'): string[] {
  return git(bare, 'log', `--format=${format}`, 'main').split('\n').filter(Boolean);
}

/** Waits until the bare repository's main has at least `n` commits (API writes are pushed). */
export async function waitForCommits(bare: string, n: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (gitLog(bare).length >= n) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 100));
  }
}
