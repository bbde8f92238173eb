import { redactUrl } from '../lib/redact-url.ts';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, open, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UnavailableError } from '../errors.ts';
import { FAST_IMPORT_ARGS, importedTip, importStream, type ImportCommit } from './fast-import.ts';
import type { GitIdentity } from './identity.ts';
import { formatIdentity } from './identity.ts';
import { buildPack, foldersOf, type TreeSnapshot } from './pack.ts';
import { readRefFromFiles } from './ref-files.ts';
import { GitCommandError, runGit, runGitBytes } from './run.ts';

export interface GitRepoOptions {
  /** Folder of the working clone. */
  dir: string;
  url: string;
  branch: string;
  /** Who commits (the controller); authors are set per commit. */
  committer: GitIdentity;
  /** Longest a single git process may stay silent before it is killed. */
  timeoutMs?: number;
  /** Kills every running git process of this clone, and refuses new ones, when aborted. */
  signal?: AbortSignal;
  /** Told how each fetch and push went (metrics, notifications); must not throw. */
  observe?: GitObserver;
}

/** One network operation with the remote: which, how long it took, and its error if it failed. */
export type GitObserver = (op: 'fetch' | 'push', seconds: number, error?: unknown) => void;

export interface TreeChange {
  changed: string[];
  removed: string[];
}

/** A push the remote refused because it has commits the clone lacks (fetch, rebase, retry). */
export function isNonFastForward(err: unknown): boolean {
  return /\[rejected\]|non-fast-forward|fetch first|stale info|failed to update ref|cannot lock ref/i.test(String((err as Error)?.message ?? err));
}

/** The branch this clone followed is gone from the remote (deleted, renamed). */
export class MissingBranchError extends UnavailableError {
  constructor(url: string, branch: string, lastSeen: string) {
    super(
      `git: branch ${branch} no longer exists on ${redactUrl(url)} (last seen at ${lastSeen.slice(0, 12)}); ` +
        `nothing is synced or written until it is restored (git push origin ${lastSeen}:refs/heads/${branch})`,
    );
    this.name = 'MissingBranchError';
  }
}

/** First line of a git error, without the noise around it. */
export function gitMessage(err: unknown): string {
  const text = String((err as Error)?.message ?? err).trim();
  const line = text.split('\n').find((l) => /fatal:|error:|rejected/i.test(l)) ?? text.split('\n')[0] ?? text;
  return line.replace(/^(fatal|error):\s*/i, '').trim();
}

/**
 * The controller's working clone: the few git operations git mode needs, each a plain git
 * command. Not synchronized itself: callers hold the writer lock around every mutation.
 */
export class GitRepo {
  readonly dir: string;
  readonly url: string;
  readonly branch: string;
  readonly #committer: GitIdentity;
  readonly #timeoutMs: number;
  readonly #observe: GitObserver | undefined;
  #env: Record<string, string> | undefined;
  /**
   * HEAD and the remote-tracking head as last known (undefined: ask git). Only this class moves
   * them, so each mutation forgets or sets them: a batch of writes asks git once, not each time.
   */
  #head: string | null | undefined;
  #remoteHead: string | null | undefined;
  #ensured = false;
  /** Aborted by `abort()` (shutdown) or by the signal of the options. */
  readonly #abort = new AbortController();
  /** The trees at the last commits built (importCommits), by commit id: the next batch on one reads none from git. */
  readonly #trees = new Map<string, TreeSnapshot>();

  constructor(opts: GitRepoOptions) {
    this.dir = opts.dir;
    this.url = opts.url;
    this.branch = opts.branch;
    this.#committer = opts.committer;
    this.#timeoutMs = opts.timeoutMs ?? 120_000;
    this.#observe = opts.observe;
    if (opts.signal?.aborted) this.#abort.abort();
    else opts.signal?.addEventListener('abort', () => this.abort(), { once: true });
  }

  /**
   * Kills the git processes running now (a fetch hanging on an unreachable remote) and makes
   * every later command fail at once: the stop of a server never waits for the network.
   */
  abort(): void {
    this.#abort.abort();
  }

  get aborted(): boolean {
    return this.#abort.signal.aborted;
  }

  async #observed<T>(op: 'fetch' | 'push', run: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const tell = (error?: unknown) => {
      try {
        this.#observe?.(op, (performance.now() - started) / 1000, error);
      } catch {
        // An observer's fault never changes the outcome of a git operation.
      }
    };
    try {
      const out = await run();
      tell();
      return out;
    } catch (err) {
      tell(err);
      throw err;
    }
  }

  get remoteRef(): string {
    return `refs/remotes/origin/${this.branch}`;
  }

  /** git with the controller as committer and no user or system config surprises. */
  async #raw(args: string[], input?: Buffer): Promise<string> {
    this.#env ??= gitEnv(process.env);
    return runGit(
      ['-c', `user.name=${this.#committer.name}`, '-c', `user.email=${this.#committer.email}`, '-c', 'core.quotepath=off', '-c', 'commit.gpgsign=false', ...args],
      { cwd: this.dir, env: this.#env, silenceMs: this.#timeoutMs, signal: this.#abort.signal, input },
    );
  }

  /** Creates the clone (init + remote) or points an existing one at the configured URL. */
  async ensure(): Promise<void> {
    if (this.#ensured && existsSync(join(this.dir, '.git'))) return;
    await mkdir(this.dir, { recursive: true });
    if (!existsSync(join(this.dir, '.git'))) {
      this.#head = this.#remoteHead = undefined;
      await this.#raw(['init', '--quiet']);
      await this.#raw(['symbolic-ref', 'HEAD', `refs/heads/${this.branch}`]);
      await this.#raw(['remote', 'add', 'origin', this.url]);
    } else {
      const current = (await this.#raw(['remote', 'get-url', 'origin']).catch(() => '')).trim();
      if (current !== this.url) await this.#raw(['remote', current ? 'set-url' : 'add', 'origin', this.url]);
    }
    this.#ensured = true;
  }

  /**
   * Fetches the remote; the branch's remote head, or null when the branch has never existed
   * there (a new, empty repository: nothing to sync yet). A branch this clone has seen before
   * and the remote no longer has is a MissingBranchError: syncing the empty branch would prune
   * everything, and writing would recreate it without its history.
   */
  async fetch(): Promise<string | null> {
    return this.#observed('fetch', () => this.#fetch());
  }

  async #fetch(): Promise<string | null> {
    let missing = false;
    await this.#raw(['fetch', '--quiet', '--prune', 'origin', `+refs/heads/${this.branch}:${this.remoteRef}`]).catch((err: unknown) => {
      if (!/couldn't find remote ref/i.test(String((err as Error).message))) throw err;
      missing = true;
    });
    const head = await this.resolve(this.remoteRef);
    this.#remoteHead = head;
    // The remote-tracking ref is kept when the branch disappears, so the clone remembers it.
    if (missing && head) throw new MissingBranchError(this.url, this.branch, head);
    return missing ? null : head;
  }

  /**
   * The commit `ref` names, or null. HEAD and full ref names are read from the clone's files when
   * they settle it (ref-files.ts: no process per poll or batch), anything else asks `git rev-parse`.
   */
  async resolve(ref: string): Promise<string | null> {
    const fromFiles = readRefFromFiles(this.dir, ref);
    if (fromFiles !== undefined) return fromFiles;
    const out = await this.#raw(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]).catch(() => '');
    return out.trim() || null;
  }

  async head(): Promise<string | null> {
    if (this.#head === undefined) this.#head = await this.resolve('HEAD');
    return this.#head;
  }

  async isAncestor(rev: string, of: string): Promise<boolean> {
    return this.#raw(['merge-base', '--is-ancestor', rev, of]).then(
      () => true,
      () => false,
    );
  }

  async hasCommit(rev: string): Promise<boolean> {
    return (await this.resolve(rev)) !== null;
  }

  /** Moves the branch and the working tree to `rev` (null: an empty, unborn branch). Drops stray files. */
  async resetTo(rev: string | null): Promise<void> {
    this.#head = undefined;
    if (rev) {
      await this.#raw(['checkout', '--quiet', '--force', '-B', this.branch, rev]);
      await this.#raw(['reset', '--quiet', '--hard', rev]);
    } else {
      await this.#raw(['symbolic-ref', 'HEAD', `refs/heads/${this.branch}`]);
      await this.#raw(['update-ref', '-d', `refs/heads/${this.branch}`]).catch(() => {});
      await this.#raw(['read-tree', '--empty']);
    }
    await this.#raw(['clean', '--quiet', '-fd']);
    if (rev === null || isObjectId(rev)) this.#head = rev;
  }

  /** Files under `prefix` that differ between two commits, relative to `prefix`. Renames are a removal plus an addition. */
  async diff(from: string, to: string, prefix: string): Promise<TreeChange> {
    const out = await this.#raw(['diff', '--name-status', '-z', '--no-renames', from, to, '--', prefix || '.']);
    const parts = out.split('\0').filter((p) => p !== '');
    const changed: string[] = [];
    const removed: string[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const rel = relativeTo(prefix, parts[i + 1]);
      if (rel === null) continue;
      (parts[i].startsWith('D') ? removed : changed).push(rel);
    }
    return { changed: changed.sort(), removed: removed.sort() };
  }

  /** Path (relative to `prefix`) → author name of the newest commit in `from..to` that touched it. */
  async authors(from: string | null, to: string, prefix: string): Promise<Map<string, string>> {
    const range = from ? `${from}..${to}` : to;
    const out = await this.#raw(['log', '--no-renames', '--name-only', '--format=%x1e%an', range, '--', prefix || '.']);
    const map = new Map<string, string>();
    for (const record of out.split('\x1e').slice(1)) {
      const [author, ...files] = record.split('\n');
      for (const f of files) {
        const rel = f.trim() ? relativeTo(prefix, f.trim()) : null;
        if (rel !== null && !map.has(rel)) map.set(rel, author.trim());
      }
    }
    return map;
  }

  /** Stages `paths` (repo-relative; deletions included) and commits them. Null when nothing changed. */
  async commit(paths: string[], message: string, author: GitIdentity): Promise<string | null> {
    this.#head = undefined;
    await this.#raw(['add', '--all', '--', ...paths]);
    const staged = await this.#raw(['diff', '--cached', '--name-only', '--', ...paths]);
    if (!staged.trim()) return null;
    await this.#raw(['commit', '--no-verify', `--author=${formatIdentity(author)}`, '-m', message, '--', ...paths]);
    return this.head();
  }

  /**
   * Pushes the branch. Once the branch is known, only over the head last fetched
   * (`--force-with-lease` with that commit; HEAD always descends from it, so this never drops a
   * remote commit): a branch deleted or moved meanwhile refuses the push ("stale info") instead
   * of being recreated without its history. Throws on refusal (see isNonFastForward).
   */
  async push(rev = 'HEAD'): Promise<void> {
    const known = this.#remoteHead === undefined ? await this.resolve(this.remoteRef) : this.#remoteHead;
    const lease = known ? [`--force-with-lease=refs/heads/${this.branch}:${known}`] : [];
    this.#remoteHead = undefined;
    await this.#observed('push', () => this.#raw(['push', '--quiet', '--porcelain', ...lease, 'origin', `${rev}:refs/heads/${this.branch}`]));
    // The push moved the remote-tracking ref there too.
    if (isObjectId(rev)) this.#remoteHead = rev;
  }

  /**
   * Builds `commits` (one each, in order) on top of `base` and points the private ref
   * STAGING_REF (`-<slot>`: two batches built at once never share one) at the last; the branch,
   * index and working tree are left as they are. Built in this process (pack.ts) as one pack
   * written into the clone; the trees of `base` are read with one `git cat-file` unless the
   * batch before was built on them. Resolves to the last commit.
   */
  async importCommits(base: string | null, commits: ImportCommit[], slot = 0): Promise<string> {
    const ref = slot ? `${STAGING_REF}-${slot}` : STAGING_REF;
    if ((base !== null && !/^[0-9a-f]{40}$/.test(base)) || commits.some((c) => c.path.includes('\n'))) {
      // Not a SHA-1 commit id (a SHA-256 clone, a ref name), or a path cat-file cannot be asked for: git builds it.
      return importedTip(await this.#raw(FAST_IMPORT_ARGS, importStream(commits, ref, base, this.#committer)));
    }
    const trees: TreeSnapshot = new Map(base ? this.#trees.get(base) : undefined);
    const missing = [...foldersOf(commits.map((c) => c.path))].filter((dir) => !trees.has(dir));
    if (missing.length > 0) for (const [dir, tree] of await this.#readTrees(base, missing)) trees.set(dir, tree);
    const now = new Date();
    const built = buildPack({ base, commits, committer: this.#committer, trees, when: { seconds: now.getTime() / 1000, offsetMinutes: -now.getTimezoneOffset() } });
    const gitDir = join(this.dir, '.git');
    const packDir = join(gitDir, 'objects', 'pack');
    // The pack before its index: git sees a pack only once its index is there.
    await writeDurably(packDir, `pack-${built.checksum}.pack`, built.pack);
    await writeDurably(packDir, `pack-${built.checksum}.idx`, built.idx);
    await updateRefFile(gitDir, ref, built.tip);
    this.#trees.set(built.tip, built.trees);
    // The tips of the last few batches: the next batch is built on one of them.
    for (const key of this.#trees.keys()) if (this.#trees.size > 4) this.#trees.delete(key);
    return built.tip;
  }

  /** The trees of `dirs` ('' = the root) at `base` (null: none anywhere), by one `git cat-file --batch`. */
  async #readTrees(base: string | null, dirs: string[]): Promise<TreeSnapshot> {
    const out: TreeSnapshot = new Map();
    if (!base) {
      for (const dir of dirs) out.set(dir, null);
      return out;
    }
    const input = Buffer.from(dirs.map((dir) => (dir ? `${base}:${dir}\n` : `${base}^{tree}\n`)).join(''), 'utf8');
    const bytes = await runGitBytes(['cat-file', '--batch'], { cwd: this.dir, env: (this.#env ??= gitEnv(process.env)), silenceMs: this.#timeoutMs, signal: this.#abort.signal, input });
    let at = 0;
    for (const dir of dirs) {
      const eol = bytes.indexOf(0x0a, at);
      if (eol < 0) throw new Error(`git cat-file answered too little for ${dir || 'the root'}`);
      const header = bytes.subarray(at, eol).toString('utf8').split(' ');
      at = eol + 1;
      if (header.length !== 3) {
        // "<name> missing": no such folder at base.
        out.set(dir, null);
        continue;
      }
      const [id, type, size] = header;
      const body = bytes.subarray(at, at + Number(size));
      at += Number(size) + 1;
      // A file where a folder would be: the commit puts the folder in its place.
      out.set(dir, type === 'tree' ? { bytes: Buffer.from(body), id } : null);
    }
    return out;
  }

  /**
   * Moves the branch, the index and the working tree to `rev`, a descendant of HEAD with no
   * local change in the way (`reset --keep`: only the files that differ are touched); a full
   * reset when that is refused.
   */
  async advanceTo(rev: string): Promise<void> {
    this.#head = undefined;
    try {
      await this.#raw(['reset', '--quiet', '--keep', rev]);
      if (isObjectId(rev)) this.#head = rev;
    } catch {
      await this.resetTo(rev);
    }
  }

  /** Repository paths that differ between two commits (`from` null: every path of `to`). */
  async changedPaths(from: string | null, to: string): Promise<Set<string>> {
    const out = from
      ? await this.#raw(['diff', '--name-only', '-z', '--no-renames', from, to])
      : await this.#raw(['ls-tree', '-r', '-z', '--name-only', to]);
    return new Set(out.split('\0').filter(Boolean));
  }

  /** Replays the local commits onto the fetched remote head; false (and aborted) on conflict. */
  async rebase(onto: string): Promise<boolean> {
    this.#head = undefined;
    try {
      await this.#raw(['rebase', '--quiet', onto]);
      return true;
    } catch {
      await this.#raw(['rebase', '--abort']).catch(() => {});
      return false;
    }
  }

  /** A commit undoing `rev` on top of HEAD (history is never rewritten). */
  async revert(rev: string, author: GitIdentity, message: string): Promise<string | null> {
    this.#head = undefined;
    const parents = (await this.#raw(['rev-list', '--parents', '-n', '1', rev])).trim().split(' ').length - 1;
    try {
      await this.#raw(['revert', '--no-commit', ...(parents > 1 ? ['-m', '1'] : []), rev]);
    } catch (err) {
      await this.#raw(['revert', '--abort']).catch(() => {});
      throw err;
    }
    const staged = await this.#raw(['diff', '--cached', '--name-only']);
    if (!staged.trim()) return null;
    await this.#raw(['commit', '--quiet', '--no-verify', `--author=${formatIdentity(author)}`, '-m', message]);
    return this.head();
  }

  /** The newest `limit` commits of HEAD that touched `path` (repo-relative), newest first. */
  async fileLog(path: string, limit: number): Promise<{ sha: string; author: string; at: string; subject: string }[]> {
    const out = await this.#raw(['log', '--no-renames', `-n${limit}`, '--format=%x1e%H%x1f%an <%ae>%x1f%aI%x1f%s', 'HEAD', '--', path]);
    return out
      .split('\x1e')
      .slice(1)
      .map((r) => {
        const [sha, author, at, subject] = r.trim().split('\x1f');
        return { sha, author, at, subject };
      });
  }

  /** The bytes of `path` (repo-relative) at `rev`, or null when it did not exist there. */
  async fileAt(rev: string, path: string): Promise<string | null> {
    try {
      return await this.#raw(['show', `${rev}:${path}`]);
    } catch (err) {
      if (err instanceof GitCommandError) return null;
      throw err;
    }
  }

  /** Author name and email of a commit (tests and logs). */
  async commitInfo(rev: string): Promise<{ sha: string; author: string; subject: string; files: string[] }> {
    const out = await this.#raw(['show', '--no-renames', '--name-only', '--format=%H%x1f%an <%ae>%x1f%s', rev]);
    const [head, ...files] = out.trim().split('\n');
    const [sha, author, subject] = head.split('\x1f');
    return { sha, author, subject, files: files.filter(Boolean) };
  }
}

/** Where the writer builds a batch's commits before pushing them (never pushed by this name). */
export const STAGING_REF = 'refs/bi-controller/staging';

/** The process environment for git: never prompt, never open an editor or a pager. */
export function gitEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined || /^(GIT_)?(EDITOR|PAGER|SEQUENCE_EDITOR)$|^VISUAL$/.test(k)) continue;
    out[k] = v;
  }
  // A transfer stalled below 1 byte/s for 60 s is given up (git-remote-http would otherwise
  // wait on a silent remote forever, even after its git was killed); the operator's own wins.
  return { GIT_HTTP_LOW_SPEED_LIMIT: '1', GIT_HTTP_LOW_SPEED_TIME: '60', ...out, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' };
}

/** Writes `name` in `dir` through a temporary file (synced, then renamed), as git writes a pack. */
async function writeDurably(dir: string, name: string, bytes: Buffer): Promise<void> {
  await writeThenRename(join(dir, `tmp_${randomBytes(6).toString('hex')}_${name}`), join(dir, name), bytes, { mode: 0o444, sync: true });
}

/**
 * Points the loose ref `ref` at `id` as git does: `<ref>.lock` created exclusively (another
 * writer holding it fails this one), written, renamed over the ref.
 */
async function updateRefFile(gitDir: string, ref: string, id: string): Promise<void> {
  const path = join(gitDir, ref);
  await mkdir(dirname(path), { recursive: true });
  await writeThenRename(`${path}.lock`, path, Buffer.from(`${id}\n`), { mode: 0o644, sync: false });
}

/** `bytes` into `tmp` (created exclusively: a file already there fails this), then renamed to `path`; `tmp` removed if the rename fails. */
async function writeThenRename(tmp: string, path: string, bytes: Buffer, opts: { mode: number; sync: boolean }): Promise<void> {
  const fh = await open(tmp, 'wx', opts.mode);
  try {
    await fh.writeFile(bytes);
    if (opts.sync) await fh.sync();
  } finally {
    await fh.close();
  }
  try {
    await rename(tmp, path);
  } catch (err) {
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/** A full commit id (not a ref name that could move). */
function isObjectId(rev: string): boolean {
  return /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(rev);
}

function relativeTo(prefix: string, repoPath: string): string | null {
  if (!prefix) return repoPath;
  return repoPath.startsWith(`${prefix}/`) ? repoPath.slice(prefix.length + 1) : null;
}
