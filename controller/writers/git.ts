import { readFile, stat } from 'node:fs/promises';
import { ConflictError, UnavailableError } from '../errors.ts';
import type { ImportCommit } from '../git/fast-import.ts';
import { sanitizeMessage, userIdentity } from '../git/identity.ts';
import type { WriterLock } from '../git/lock.ts';
import { publish } from '../git/publish.ts';
import { gitMessage, type GitRepo } from '../git/repo.ts';
import { silentLogger, type Logger } from '../log.ts';
import type { ManifestWriter, WriteOptions, WriteResult } from '../types.ts';
import { safeManifestPath } from './paths.ts';
import { caseTwin, caseTwinSync, refuseTwin } from './case-twin.ts';

export interface GitWriterOptions {
  repo: GitRepo;
  lock: WriterLock;
  /** Manifests folder inside the clone (the reconciler's root). */
  root: string;
  /** The same folder relative to the repository ('' = the root). */
  path: string;
  sleep: (ms: number) => Promise<void>;
  random?: () => number;
  /** Pushes tried per batch. */
  attempts?: number;
  /**
   * Group commit: when fewer writes are queued than are expected back (as many as the last batch
   * held; right after a push, its writes besides those already queued), the next batch waits up
   * to `maxMs` (ended early once as many are queued) for the rest of a burst, whose callers are
   * still on their way back, instead of going alone and leaving them a whole batch behind.
   */
  gather?: { maxMs: number; wait: (ms: number) => Promise<void> };
  /** Called after a push that had to go on top of foreign commits: they still need a sync. */
  onRemoteMoved?: () => void;
  log?: Logger;
}

/** Writes committed and pushed together at most. */
const MAX_BATCH = 64;

interface PendingWrite {
  relPath: string;
  /** The file in the working clone. */
  abs: string;
  repoPath: string;
  /** The whole new file, or null: the file is removed. */
  content: string | null;
  opts: WriteOptions;
  resolve(result: WriteResult): void;
  reject(err: unknown): void;
}

/**
 * The API's writer in git mode: one commit per write, authored by the calling user, pushed
 * before the write is answered. Writes that arrive while a batch is being pushed queue and form
 * the next batch (group commit): its commits are built in one pack on top of the clone's head
 * (GitRepo.importCommits) and pushed with one `git push` (never forced). When the remote moved
 * meanwhile, the batch is rebuilt on the new head, except the writes whose file the remote
 * changed (ConflictError, 409). When it cannot push, UnavailableError (503): the clone, the
 * store and the remote stay as they were.
 */
export class GitWriter implements ManifestWriter {
  readonly #o: GitWriterOptions;
  readonly #log: Logger;
  #pending: PendingWrite[] = [];
  #draining = false;
  /** Writes in the last batch: the size a burst is expected to come back with. */
  #lastBatch = 0;
  /** Staging ref of the batch being built: a batch built ahead never shares one with the batch pushed. */
  #slot = 0;
  /** Ends a gathering wait early (`#expected` writes queued). */
  #gathered: (() => void) | undefined;
  #expected = 0;
  /**
   * Moving the clone onto pushed commits (`reset --keep`) is off the writes' path: a batch is
   * answered once pushed and the next one pushes meanwhile. `#landed` holds each path pushed and
   * not yet in the working tree (the batch number that wrote it last), `#landedTip` the commit the
   * clone is being moved to; the batch loop waits for the move before it lets go of the lock.
   */
  #landed = new Map<string, { content: string | null; seq: number }>();
  #landedTip: string | null | undefined;
  #pushedSeq = 0;
  #advancing: Promise<void> = Promise.resolve();

  constructor(opts: GitWriterOptions) {
    this.#o = opts;
    this.#log = opts.log ?? silentLogger();
  }

  async write(relPath: string, content: string, opts: WriteOptions): Promise<WriteResult> {
    // Read synchronously: writes join the batch in the order of their calls (an await here would
    // let a write called later overtake this one into an earlier batch).
    refuseTwin(relPath, caseTwinSync(this.#o.root, relPath));
    return this.#enqueue(relPath, content, opts);
  }

  caseTwin(relPath: string): Promise<string | undefined> {
    return caseTwin(this.#o.root, relPath);
  }

  /** A commit deleting the file; nothing when it is not there. */
  async remove(relPath: string, opts: WriteOptions): Promise<WriteResult> {
    return this.#enqueue(relPath, null, opts);
  }

  /** Resolves once the clone is moved onto every batch pushed so far. */
  async settle(): Promise<void> {
    let seen: Promise<void> | undefined;
    while (seen !== this.#advancing) {
      seen = this.#advancing;
      await seen;
    }
  }

  async exists(relPath: string): Promise<boolean> {
    const landed = this.#landed.get(this.#repoPath(relPath));
    if (landed) return landed.content !== null;
    try {
      await stat(safeManifestPath(this.#o.root, relPath));
      return true;
    } catch {
      return false;
    }
  }

  /** The path in the repository of a path under the manifests root. */
  #repoPath(relPath: string): string {
    return this.#o.path ? `${this.#o.path}/${relPath}` : relPath;
  }

  #enqueue(relPath: string, content: string | null, opts: WriteOptions): Promise<WriteResult> {
    const abs = safeManifestPath(this.#o.root, relPath);
    const repoPath = this.#repoPath(relPath);
    return new Promise<WriteResult>((resolve, reject) => {
      this.#pending.push({ relPath, abs, repoPath, content, opts, resolve, reject });
      if (this.#pending.length >= this.#expected) this.#gathered?.();
      this.#drain();
    });
  }

  #drain(): void {
    if (this.#draining || this.#pending.length === 0) return;
    this.#draining = true;
    void this.#o.lock
      .run(() => this.#run())
      .finally(() => {
        this.#draining = false;
        this.#drain();
      });
  }

  /**
   * Publishes batches until none is queued. While one is being pushed, the next (once as many
   * writes are queued as the last batch held) is built on top of it, so under load a batch costs
   * about one push; if the pushed commits are not the ones it was built on (the remote moved, the
   * push failed), it is built again on what the clone now holds.
   */
  async #run(): Promise<void> {
    try {
      await this.#batches();
    } finally {
      // The lock goes to a sync only with the clone on what was pushed.
      await this.settle();
      // A move that failed (the sync it asked for heals the clone): nothing recorded is trusted past the lock.
      this.#landed.clear();
      this.#landedTip = undefined;
    }
  }

  async #batches(): Promise<void> {
    let prepared: Prepared | undefined;
    /** Writes of the batch this run pushed last (answered: their callers may be on their way back). */
    let answered = 0;
    /** Those and the writes already queued when they were answered: how many the next batch expects. */
    let expected = 0;
    while (prepared || this.#pending.length > 0) {
      let current = prepared;
      if (!current) {
        await this.#gather(expected);
        const { writes, slot } = this.#take();
        current = await this.#prepareOnHead(writes, slot);
      }
      prepared = undefined;
      if (!current) continue;
      const pushed = this.#publish(current);
      const ahead = await this.#prepareAhead(current, pushed, answered);
      const outcome = await pushed;
      answered = current.writes.length;
      expected = answered + outcome.queued;
      if (ahead && (!outcome.ok || outcome.tip !== current.tip)) prepared = await this.#prepareOnHead(ahead.writes, ahead.slot);
      else prepared = ahead;
    }
  }

  /** The next batch, and the staging slot it is built on (two batches in flight never share one). */
  #take(): { writes: PendingWrite[]; slot: number } {
    const writes = this.#pending.splice(0, MAX_BATCH);
    this.#lastBatch = writes.length;
    this.#slot = (this.#slot + 1) % 2;
    return { writes, slot: this.#slot };
  }

  /**
   * Waits (up to `maxMs`) for as many writes as the last batch held or, right after a push, as
   * it answered and were queued besides when it answered (`afterPush`): writers that would
   * alternate in two half batches, each paying a whole push, are joined into one batch.
   */
  async #gather(afterPush: number): Promise<void> {
    const gather = this.#o.gather;
    const expected = Math.max(this.#lastBatch, afterPush);
    if (!gather || gather.maxMs <= 0 || this.#pending.length >= expected) return;
    await this.#until(expected, gather.wait(gather.maxMs));
  }

  /** Resolves once `expected` writes are queued or `other` settles. */
  async #until(expected: number, other: Promise<unknown>): Promise<void> {
    this.#expected = expected;
    await Promise.race([other, new Promise<void>((resolve) => (this.#gathered = resolve))]);
    this.#gathered = undefined;
  }

  /**
   * While `current` is pushed: once as many writes are queued as it and the batch this run pushed
   * before it (`before`) held, builds them on top of it. Undefined when the push ended first (the
   * loop then gathers and builds them as usual): the writes of the batch before, back while
   * `current` is pushed, wait for its writes to join them instead of paying a push of their own.
   */
  async #prepareAhead(current: Prepared, pushed: Promise<unknown>, before: number): Promise<Prepared | undefined> {
    if (current.commits.length === 0) return undefined;
    let done = false;
    const settled = pushed.then(() => {
      done = true;
    });
    const expected = Math.max(1, this.#lastBatch + before);
    if (this.#pending.length < expected) await this.#until(expected, settled);
    if (done || this.#pending.length === 0) return undefined;
    const view = (w: PendingWrite) => (current.after.has(w.repoPath) ? Promise.resolve(current.after.get(w.repoPath) ?? null) : this.#atHead(w));
    const { writes, slot } = this.#take();
    return this.#prepare(writes, slot, current.tip, view);
  }

  /** Plans `writes` on the clone's head, as its working tree holds it. */
  async #prepareOnHead(writes: PendingWrite[], slot: number): Promise<Prepared | undefined> {
    const { repo } = this.#o;
    let base: string | null;
    try {
      await repo.ensure();
      base = this.#landedTip !== undefined ? this.#landedTip : await repo.head();
    } catch (err) {
      const error = new UnavailableError(`git: the working clone is not usable: ${gitMessage(err)}`);
      writes.forEach((w) => w.reject(error));
      return undefined;
    }
    return this.#prepare(writes, slot, base, (w) => this.#atHead(w));
  }

  /** Decides which writes make a commit (on `base`, as `view` shows it) and builds them in one pack. */
  async #prepare(writes: PendingWrite[], slot: number, base: string | null, view: (w: PendingWrite) => Promise<string | null>): Promise<Prepared | undefined> {
    const plan = await planCommits(writes, view);
    plan.failed.forEach(({ write, error }) => write.reject(error));
    const live = writes.filter((w) => !plan.failed.some((f) => f.write === w));
    try {
      const tip = plan.commits.length > 0 ? await this.#o.repo.importCommits(base, plan.commits.map(toImport), slot) : base;
      return { writes: live, commits: plan.commits, base, tip, after: plan.after, view, slot };
    } catch (err) {
      const error = new UnavailableError(`git: could not build the commits: ${gitMessage(err)}`);
      live.forEach((w) => w.reject(error));
      return undefined;
    }
  }

  /** What `w`'s file holds at the last pushed commit: pushed and not yet checked out, or the working tree. */
  async #atHead(w: PendingWrite): Promise<string | null> {
    const landed = this.#landed.get(w.repoPath);
    return landed ? landed.content : readOrNull(w.abs);
  }

  /**
   * Pushes a prepared batch (rebuilt on the new head when the remote moved), moves the clone
   * onto it and answers its writes. Resolves to whether it was pushed and as which commit, and
   * how many other writes were queued when it answered.
   */
  async #publish(batch: Prepared): Promise<{ ok: boolean; tip: string | null; queued: number }> {
    const { repo } = this.#o;
    let { writes, tip, base } = batch;
    if (batch.commits.length === 0) {
      writes.forEach((w) => w.resolve({ revision: base ?? undefined }));
      return { ok: true, tip: base, queued: this.#pending.length };
    }
    let { commits } = batch;
    try {
      const { rebased } = await publish(repo, {
        sleep: this.#o.sleep,
        random: this.#o.random,
        attempts: this.#o.attempts,
        push: () => repo.push(tip ?? 'HEAD'),
        // The remote moved: the writes whose file it changed fail, the others are rebuilt on it.
        rebase: async (head) => {
          const foreign = await repo.changedPaths(base, head);
          writes.filter((w) => foreign.has(w.repoPath)).forEach((w) => w.reject(conflictError(w, repo.branch)));
          const rebuilt = await this.#prepare(
            writes.filter((w) => !foreign.has(w.repoPath)),
            batch.slot,
            head,
            batch.view,
          );
          if (!rebuilt) throw new UnavailableError('git: could not rebuild the commits on the new head');
          ({ writes, tip, base, commits } = rebuilt);
          return true;
        },
      });
      const revision = tip ?? undefined;
      this.#land(commits, tip);
      // After a rebase the move also brings foreign files the batch maps know nothing of: wait for it.
      if (rebased) await this.#advancing;
      this.#log.info({ commits: commits.length, revision, rebased, message: commits.map((w) => w.opts.message).join('; ') }, 'git: pushed');
      if (rebased) this.#o.onRemoteMoved?.();
      const queued = this.#pending.length;
      writes.forEach((w) => w.resolve({ revision }));
      return { ok: true, tip, queued };
    } catch (err) {
      const error = err instanceof UnavailableError ? err : new UnavailableError(`git: could not push: ${gitMessage(err)}`);
      // Nothing of the batch reached the remote: the clone's branch and working tree never moved.
      writes.forEach((w) => w.reject(error));
      return { ok: false, tip: null, queued: this.#pending.length };
    }
  }

  /**
   * Records a pushed batch and moves the clone onto it after the moves before it (one move for
   * several batches when they queue up: only the newest is checked out).
   */
  #land(commits: PendingWrite[], tip: string | null): void {
    const seq = ++this.#pushedSeq;
    for (const w of commits) this.#landed.set(w.repoPath, { content: w.content, seq });
    this.#landedTip = tip;
    this.#advancing = this.#advancing.then(async () => {
      if (seq !== this.#pushedSeq) return;
      if (!(await this.#advance(tip))) return;
      for (const [path, l] of this.#landed) if (l.seq <= seq) this.#landed.delete(path);
      if (seq === this.#pushedSeq) this.#landedTip = undefined;
    });
  }

  /** Puts the clone's branch and working tree on the pushed commit (a failure is healed by the next sync). */
  async #advance(tip: string | null): Promise<boolean> {
    const { repo } = this.#o;
    if (!tip || tip === (await repo.head())) return true;
    try {
      await repo.advanceTo(tip);
      return true;
    } catch (err) {
      this.#log.error({ err: gitMessage(err), revision: tip }, 'git: pushed, but could not move the clone onto it; the next sync will');
      this.#o.onRemoteMoved?.();
      return false;
    }
  }
}

/** A batch whose commits are built (on `base`, ending at `tip`), not yet pushed. */
interface Prepared {
  /** Its writes still to answer, in arrival order. */
  writes: PendingWrite[];
  /** Those that make a commit (the others change nothing). */
  commits: PendingWrite[];
  base: string | null;
  tip: string | null;
  /** Each path the batch writes, as it is after the batch. */
  after: Map<string, string | null>;
  /** What each path holds at `base` (the working tree, or the batch before it). */
  view: (w: PendingWrite) => Promise<string | null>;
  /** Its staging ref (see GitRepo.importCommits). */
  slot: number;
}

interface CommitPlan {
  /** One commit each, in order. */
  commits: PendingWrite[];
  /** Writes that change nothing (the file already holds that content): no commit. */
  unchanged: PendingWrite[];
  failed: { write: PendingWrite; error: unknown }[];
  /** Each path written, as it is after the batch. */
  after: Map<string, string | null>;
}

/** Which writes of a batch make a commit, each seeing the writes before it in the batch. */
async function planCommits(writes: PendingWrite[], contentAtBase: (w: PendingWrite) => Promise<string | null>): Promise<CommitPlan> {
  const now = new Map<string, string | null>();
  const plan: CommitPlan = { commits: [], unchanged: [], failed: [], after: now };
  for (const w of writes) {
    let current: string | null;
    try {
      current = now.has(w.repoPath) ? (now.get(w.repoPath) ?? null) : await contentAtBase(w);
    } catch (err) {
      plan.failed.push({ write: w, error: new UnavailableError(`git: could not record ${w.relPath}: ${gitMessage(err)}`) });
      continue;
    }
    if (current === w.content) plan.unchanged.push(w);
    else {
      plan.commits.push(w);
      now.set(w.repoPath, w.content);
    }
  }
  return plan;
}

function toImport(w: PendingWrite): ImportCommit {
  return { author: userIdentity(w.opts.actor), message: sanitizeMessage(w.opts.message), path: w.repoPath, content: w.content };
}

function conflictError(w: PendingWrite, branch: string): ConflictError {
  return new ConflictError(`git: ${w.relPath} was changed on ${branch} by another commit meanwhile; this write was not recorded (read it again and retry)`);
}

async function readOrNull(abs: string): Promise<string | null> {
  try {
    return await readFile(abs, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
