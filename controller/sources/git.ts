import { redactUrl } from '../lib/redact-url.ts';
import { join } from 'node:path';
import { realScheduler, systemClock, type Cancel, type Scheduler } from '../clock.ts';
import { NotFoundError, UnavailableError } from '../errors.ts';
import { sanitizeMessage, type GitIdentity } from '../git/identity.ts';
import type { WriterLock } from '../git/lock.ts';
import { publish } from '../git/publish.ts';
import { gitMessage, type GitRepo } from '../git/repo.ts';
import { GitStateStore } from '../git/state.ts';
import { silentLogger, type Logger } from '../log.ts';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from '../lib/backoff.ts';
import { emptyReport, type SourceBatch, type SourceFile, type SourceSink, type SyncReport } from '../reconciler/types.ts';
import type { Store } from '../store/db.ts';
import type { Clock, ManifestSource } from '../types.ts';
import { ManifestFiles } from './files.ts';

export interface GitSourceOptions {
  repo: GitRepo;
  lock: WriterLock;
  db: Store;
  /** Folder of the repository holding the manifests ('' = the root). */
  path: string;
  /** Poll interval. */
  intervalMs: number;
  scheduler?: Scheduler;
  clock?: Clock;
  log?: Logger;
  random?: () => number;
  /** Retries of a failed first sync (unreachable remote). */
  backoff?: BackoffPolicy;
  /** Waits between push attempts (rollback). */
  sleep?: (ms: number) => Promise<void>;
}

export interface SyncRequest {
  /** Relist every file (sync now) instead of the files changed since the last synced revision. */
  full?: boolean;
  allowMassPrune?: boolean;
}

/** What the last sync delivered to the reconciler. */
export interface GitSyncInfo {
  mode: 'full' | 'delta' | 'none';
  from: string | null;
  to: string | null;
  changed: string[];
  removed: string[];
  at: string;
}

/**
 * Desired state from a git branch. Start: clone (or reuse) under the data folder, check out the
 * branch, deliver a full relist; then poll. A fetch that moves the branch delivers only the files
 * changed between the last synced revision and the new one. Every clone mutation runs under the
 * writer lock it shares with the GitWriter.
 */
export class GitSource implements ManifestSource {
  readonly root: string;
  readonly repo: GitRepo;
  readonly #lock: WriterLock;
  readonly #path: string;
  readonly #intervalMs: number;
  readonly #scheduler: Scheduler;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #state: GitStateStore;
  readonly #files: ManifestFiles;
  #sink: SourceSink | undefined;
  #revision: string | null = null;
  #primed = false;
  #stopped = false;
  #queued: Promise<SyncReport> | undefined;
  readonly #inflight = new Set<Promise<unknown>>();
  #pollTimer: Cancel | undefined;
  #wake: (() => void) | undefined;
  #lastSync: GitSyncInfo | undefined;
  #lastError: string | undefined;
  #resumedFrom: string | null = null;

  constructor(opts: GitSourceOptions) {
    this.repo = opts.repo;
    this.#lock = opts.lock;
    this.#path = opts.path;
    this.root = opts.path ? join(opts.repo.dir, opts.path) : opts.repo.dir;
    this.#intervalMs = opts.intervalMs;
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.#clock = opts.clock ?? systemClock;
    this.#log = opts.log ?? silentLogger();
    this.#random = opts.random ?? Math.random;
    this.#backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.#sleep = opts.sleep ?? ((ms) => new Promise((resolve) => this.#scheduler(resolve, ms)));
    this.#files = new ManifestFiles(this.root);
    this.#state = new GitStateStore({ db: opts.db, key: { url: opts.repo.url, branch: opts.repo.branch, path: opts.path } });
  }

  /** The last revision delivered to the reconciler (null before the first sync of a non-empty branch). */
  get revision(): string | null {
    return this.#revision;
  }

  /** The revision the store records as synced (readable without starting: bictl status). */
  get recordedRevision(): string | null {
    return this.#state.get()?.revision ?? null;
  }

  get lastSync(): GitSyncInfo | undefined {
    return this.#lastSync;
  }

  /** The last fetch error, until a fetch succeeds. */
  get lastError(): string | undefined {
    return this.#lastError;
  }

  /** The recorded revision this process started from (a restart), if any. */
  get resumedFrom(): string | null {
    return this.#resumedFrom;
  }

  /**
   * The first sync, retried with backoff while the remote cannot be reached (the process keeps
   * running, /readyz stays 503). Resolves once it succeeded, or when the source is stopped.
   */
  connect(sink: SourceSink): void {
    this.#sink = sink;
  }

  async start(): Promise<void> {
    this.#resumedFrom = this.#state.get()?.revision ?? null;
    this.#revision = this.#resumedFrom;
    for (let attempt = 1; !this.#stopped && !this.#primed; attempt++) {
      try {
        await this.sync({ full: true });
      } catch (err) {
        if (this.#primed || this.#stopped) break;
        const delay = backoffDelay(attempt, this.#backoff, this.#random);
        this.#log.error(
          { err: (err as Error).message, url: redactUrl(this.repo.url), branch: this.repo.branch, attempt, retryInMs: delay },
          'git: cannot sync from the remote; retrying',
        );
        await new Promise<void>((resolve) => {
          const cancel = this.#scheduler(() => {
            this.#wake = undefined;
            resolve();
          }, delay);
          this.#wake = () => {
            cancel();
            this.#wake = undefined;
            resolve();
          };
        });
      }
    }
    this.#schedulePoll();
  }

  /** Sync now: fetch, then deliver every file of the branch (unchanged ones are skipped by hash). */
  syncNow(opts: { allowMassPrune?: boolean } = {}): Promise<SyncReport> {
    return this.sync({ full: true, allowMassPrune: opts.allowMassPrune });
  }

  /** The working clone as it is (no fetch), as one full batch. */
  async snapshot(): Promise<SourceBatch> {
    return { type: 'full', files: this.#files.readAll(), revision: this.#revision ?? undefined };
  }

  read(path: string): SourceFile | null {
    return this.#files.read(path);
  }

  /**
   * Fetches and syncs (poll, webhook, sync now). Requests that arrive while one waits for the
   * lock share it; a full sync always runs on its own.
   */
  sync(req: SyncRequest = {}): Promise<SyncReport> {
    if (!req.full && this.#queued) return this.#queued;
    const run: Promise<SyncReport> = this.#lock.run(async () => {
      if (this.#queued === run) this.#queued = undefined;
      if (this.#stopped) return emptyReport();
      return this.#syncLocked(req);
    });
    if (!req.full) this.#queued = run;
    this.#track(run);
    return run;
  }

  /** Fire and forget (webhook, a write that rebased over foreign commits); errors are logged. */
  requestSync(): void {
    this.sync().catch((err: Error) => this.#log.warn({ err: err.message }, 'git: sync failed'));
  }

  /** Resolves when no sync is queued or running. */
  async whenIdle(): Promise<void> {
    while (this.#inflight.size) await Promise.allSettled([...this.#inflight]);
  }

  /**
   * Reverts `revision` with a new commit on top of the branch (history is never rewritten),
   * pushes it and applies the result.
   */
  async rollback(revision: string, author: GitIdentity, message?: string): Promise<{ revert: string | null; report: SyncReport }> {
    const run = this.#lock.run(async () => {
      const r = await revertAndPush(this.repo, revision, author, { message, sleep: this.#sleep, random: this.#random });
      const report = await this.#syncLocked({});
      return { revert: r, report };
    });
    this.#track(run);
    return run;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pollTimer?.();
    this.#wake?.();
    this.repo.abort();
    await this.whenIdle();
  }

  #track(p: Promise<unknown>): void {
    const settled = p.then(
      () => {},
      () => {},
    );
    this.#inflight.add(settled);
    void settled.then(() => this.#inflight.delete(settled));
  }

  #schedulePoll(): void {
    if (this.#stopped || this.#intervalMs <= 0) return;
    this.#pollTimer = this.#scheduler(() => {
      this.#pollTimer = undefined;
      this.sync()
        .catch((err: Error) => this.#log.warn({ err: err.message, url: redactUrl(this.repo.url) }, 'git: poll failed'))
        .finally(() => this.#schedulePoll());
    }, this.#intervalMs);
  }

  /**
   * Whether the clone has `base`, and who last touched each file since it: one `git log` when
   * the head moved (it fails when `base` is unknown, and only then is the commit looked up, to
   * tell that from another failure), one lookup when it did not.
   */
  async #authorsSince(base: string | null, head: string | null): Promise<{ baseKnown: boolean; authors: Map<string, string> }> {
    if (base === null || head === null) return { baseKnown: false, authors: new Map() };
    if (base === head) return { baseKnown: await this.repo.hasCommit(base), authors: new Map() };
    try {
      return { baseKnown: true, authors: await this.repo.authors(base, head, this.#path) };
    } catch (err) {
      if (await this.repo.hasCommit(base)) throw err;
      return { baseKnown: false, authors: new Map() };
    }
  }

  async #syncLocked(req: SyncRequest): Promise<SyncReport> {
    const sink = this.#sink;
    if (!sink) throw new UnavailableError('git: the source is not started');
    let head: string | null;
    try {
      await this.repo.ensure();
      head = await this.repo.fetch();
      this.#lastError = undefined;
    } catch (err) {
      this.#lastError = gitMessage(err);
      throw new UnavailableError(`git: cannot fetch ${redactUrl(this.repo.url)} (branch ${this.repo.branch}): ${this.#lastError}`);
    }
    const base = this.#revision;
    const full = req.full || !this.#primed;
    if (!full && head === base && (await this.repo.head()) === head) {
      this.#lastSync = { mode: 'none', from: base, to: head, changed: [], removed: [], at: this.#clock().toISOString() };
      return emptyReport();
    }
    // The clone is already there after the API's own pushes (the writer moves it onto what it
    // pushed); a first sync always resets it (what a crash may have left behind).
    if (!this.#primed || (await this.repo.head()) !== head) await this.repo.resetTo(head);
    const { baseKnown, authors } = await this.#authorsSince(base, head);
    const meta = { revision: head ?? undefined, authors, allowMassPrune: req.allowMassPrune };
    let report: SyncReport;
    if (full || !baseKnown || !head || !base) {
      // A relist: the reconciler skips unchanged files by content hash, so only what changed
      // since the recorded revision is applied, and it learns every file it owns.
      const paths = await this.#files.list();
      report = await sink.apply({ type: 'full', files: this.#files.readAll(paths), ...meta });
      const change = baseKnown && head && base ? await this.repo.diff(base, head, this.#path) : { changed: paths, removed: [] };
      this.#lastSync = { mode: 'full', from: base, to: head, ...change, at: this.#clock().toISOString() };
    } else {
      const change = await this.repo.diff(base, head, this.#path);
      const files = change.changed.map((p) => this.#files.read(p)).filter((f): f is SourceFile => f !== null);
      const gone = change.changed.filter((p) => !files.some((f) => f.path === p));
      report = await sink.apply({ type: 'delta', files, removed: [...change.removed, ...gone], ...meta });
      this.#lastSync = { mode: 'delta', from: base, to: head, ...change, at: this.#clock().toISOString() };
    }
    if (head) this.#state.set(head, this.#clock());
    if (head !== base) this.#log.info({ from: base, to: head, ...countOf(this.#lastSync) }, 'git: synced');
    this.#revision = head;
    this.#primed = true;
    return report;
  }
}

function countOf(s: GitSyncInfo): { mode: string; changed: number; removed: number } {
  return { mode: s.mode, changed: s.changed.length, removed: s.removed.length };
}

/**
 * Fetches, puts the clone on the remote head, reverts `revision` in a new commit and pushes it.
 * Resolves to the revert commit (null: nothing to revert). On failure the clone is reset.
 */
export async function revertAndPush(
  repo: GitRepo,
  revision: string,
  author: GitIdentity,
  opts: { message?: string; sleep: (ms: number) => Promise<void>; random?: () => number },
): Promise<string | null> {
  await repo.ensure();
  const head = await repo.fetch().catch((err: unknown) => {
    throw new UnavailableError(`git: cannot fetch ${redactUrl(repo.url)}: ${gitMessage(err)}`);
  });
  await repo.resetTo(head);
  const found = /^[0-9a-f]{4,40}$/i.test(revision) ? await repo.resolve(revision) : null;
  const target = found && head && (await repo.isAncestor(found, head)) ? found : null;
  if (!target) throw new NotFoundError(`revision ${revision} not found on ${repo.branch}`);
  try {
    const sha = await repo.revert(target, author, sanitizeMessage(opts.message ?? `rollback: revert ${target.slice(0, 12)}`));
    if (!sha) return null;
    await publish(repo, { sleep: opts.sleep, random: opts.random });
    return repo.head();
  } catch (err) {
    await repo.resetTo(head).catch(() => {});
    if (err instanceof UnavailableError) throw err;
    throw new UnavailableError(`git: cannot revert ${revision}: ${gitMessage(err)}`);
  }
}
