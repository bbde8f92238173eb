import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FAST_IMPORT_ARGS, importStream } from '../../controller/git/fast-import.ts';
import { STAGING_REF } from '../../controller/git/repo.ts';
import { percentile, round } from './load.ts';

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

/** Per-operation p50s of git-mode writes done by hand in a scratch clone (the floors of the git benchmarks). */
export interface GitWriteFloors {
  /** One manifest written, `git add` + `git commit` through the CLI (no push): ms. */
  commitPerWrite: number;
  /** `batch` commits (one manifest each) built by one `git fast-import` and pushed with one `git push`: ms. */
  batchImportPush: number;
  /** One commit by `git fast-import` and one `git push` (an onboarding alone): ms. */
  singleImportPush: number;
  /** `wideBatch` commits the same way: ms (undefined without `wideBatch`). */
  wideImportPush?: number;
}

/**
 * What git itself costs per API write, measured the way the writer does it: `rounds` batches of
 * `batch` commits, each built in one fast-import process and pushed once to a bare repository
 * on the same disk, next to the old way (`git add` + `git commit` per write). `text(i)` is the
 * i-th manifest, written in `folder`. With `copyOf` (a bare repository) the floor runs on a copy
 * of it: a push carries the folder's tree once per commit, so its cost grows with the files the
 * folder already holds, and the floor should see the repository the product wrote to.
 */
export function gitWriteFloors(
  dir: string,
  text: (i: number) => string,
  opts: { batch: number; rounds: number; copyOf?: string; folder?: string; wideBatch?: number },
): GitWriteFloors {
  let url: string;
  if (opts.copyOf) {
    mkdirSync(dir, { recursive: true });
    git(dir, 'clone', '--quiet', '--bare', opts.copyOf, 'remote.git');
    url = pathToFileURL(join(dir, 'remote.git')).href;
  } else {
    url = createSeededBareRepo(dir, { 'manifests/.keep': '' }).url;
  }
  const folder = opts.folder ?? 'manifests/dashboards';
  const clone = join(dir, 'clone');
  git(dir, 'clone', '--quiet', url, 'clone');
  const committer = { name: 'bench', email: 'bench@bench.invalid' };
  let n = 0;
  const importPush = (count: number): number => {
    const commits = Array.from({ length: count }, () => {
      const i = n++;
      return { author: { name: `user ${i}`, email: `u${i}@bench.invalid` }, message: `import dashboard floor-${i}`, path: `${folder}/floor-${i}.yaml`, content: text(i) };
    });
    const t0 = performance.now();
    const base = git(clone, 'rev-parse', 'HEAD').trim();
    execFileSync('git', FAST_IMPORT_ARGS, { cwd: clone, input: importStream(commits, STAGING_REF, base, committer), stdio: ['pipe', 'pipe', 'pipe'] });
    git(clone, 'push', '--quiet', '--porcelain', 'origin', `${STAGING_REF}:refs/heads/main`);
    git(clone, 'reset', '--quiet', '--keep', STAGING_REF);
    return performance.now() - t0;
  };
  const batches = Array.from({ length: opts.rounds }, () => importPush(opts.batch));
  const singles = Array.from({ length: opts.rounds }, () => importPush(1));
  const { wideBatch } = opts;
  const wide = wideBatch ? Array.from({ length: Math.max(5, Math.round(opts.rounds / 2)) }, () => importPush(wideBatch)) : [];
  const commits = Array.from({ length: opts.rounds * opts.batch }, () => {
    const i = n++;
    const rel = `${folder}/floor-${i}.yaml`;
    const t0 = performance.now();
    mkdirSync(dirname(join(clone, rel)), { recursive: true });
    writeFileSync(join(clone, rel), text(i));
    git(clone, 'add', '--all', '--', rel);
    git(clone, 'commit', '--quiet', '--no-verify', `--author=user ${i} <u${i}@bench.invalid>`, '-m', `import dashboard floor-${i}`, '--', rel);
    return performance.now() - t0;
  });
  return {
    commitPerWrite: round(percentile(commits, 50), 2),
    batchImportPush: round(percentile(batches, 50), 2),
    singleImportPush: round(percentile(singles, 50), 2),
    ...(wide.length ? { wideImportPush: round(percentile(wide, 50), 2) } : {}),
  };
}
