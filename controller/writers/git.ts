import { stat, unlink } from 'node:fs/promises';
import { UnavailableError, ValidationError } from '../errors.ts';
import { sanitizeMessage, userIdentity } from '../git/identity.ts';
import type { WriterLock } from '../git/lock.ts';
import { publish } from '../git/publish.ts';
import { gitMessage, type GitRepo } from '../git/repo.ts';
import { silentLogger, type Logger } from '../log.ts';
import type { ManifestWriter, WriteOptions, WriteResult } from '../types.ts';
import { writeFileAtomic } from './directory.ts';
import { safeManifestPath } from './paths.ts';

export interface GitWriterOptions {
  repo: GitRepo;
  lock: WriterLock;
  /** Manifests folder inside the clone (the reconciler's root). */
  root: string;
  /** The same folder relative to the repository ('' = the root). */
  path: string;
  sleep: (ms: number) => Promise<void>;
  random?: () => number;
  /** Pushes tried per write. */
  attempts?: number;
  /** Called after a push that had to rebase over foreign commits: they still need a sync. */
  onRemoteMoved?: () => void;
  log?: Logger;
}

/** Writes pushed together at most. */
const MAX_BATCH = 32;

interface PendingWrite {
  relPath: string;
  repoPath: string;
  opts: WriteOptions;
  change: () => Promise<void>;
  resolve(result: WriteResult): void;
  reject(err: unknown): void;
}

/**
 * The API's writer in git mode: one commit per write, authored by the calling user, pushed at
 * once (together with the writes that queued meanwhile). When it cannot push, the clone is reset to where it was and UnavailableError (503) is
 * thrown, so the store and the clone stay as they were.
 */
export class GitWriter implements ManifestWriter {
  readonly #o: GitWriterOptions;
  readonly #log: Logger;
  #pending: PendingWrite[] = [];
  #draining = false;

  constructor(opts: GitWriterOptions) {
    this.#o = opts;
    this.#log = opts.log ?? silentLogger();
  }

  async write(relPath: string, content: string, opts: WriteOptions): Promise<WriteResult> {
    const abs = safeManifestPath(this.#o.root, relPath);
    return this.#commit(relPath, opts, () => writeFileAtomic(abs, content));
  }

  /** A commit deleting the file; nothing when it is not there. */
  async remove(relPath: string, opts: WriteOptions): Promise<WriteResult> {
    const abs = safeManifestPath(this.#o.root, relPath);
    return this.#commit(relPath, opts, async () => {
      await unlink(abs).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'ENOENT') throw err;
      });
    });
  }

  async exists(relPath: string): Promise<boolean> {
    try {
      await stat(safeManifestPath(this.#o.root, relPath));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Queues one write. Writes that arrive while the clone is busy are committed together — still
   * one commit each, authored by its own caller — and pushed once (group commit): throughput is
   * then bound by commits, not by round trips to the remote.
   */
  #commit(relPath: string, opts: WriteOptions, change: () => Promise<void>): Promise<WriteResult> {
    const repoPath = this.#o.path ? `${this.#o.path}/${relPath}` : relPath;
    return new Promise<WriteResult>((resolve, reject) => {
      this.#pending.push({ relPath, repoPath, opts, change, resolve, reject });
      this.#drain();
    });
  }

  #drain(): void {
    if (this.#draining || this.#pending.length === 0) return;
    this.#draining = true;
    void this.#o.lock
      .run(async () => {
        while (this.#pending.length > 0) await this.#publishBatch(this.#pending.splice(0, MAX_BATCH));
      })
      .finally(() => {
        this.#draining = false;
        this.#drain();
      });
  }

  async #publishBatch(batch: PendingWrite[]): Promise<void> {
    const { repo } = this.#o;
    try {
      await repo.ensure();
    } catch (err) {
      const error = new UnavailableError(`git: the working clone is not usable: ${gitMessage(err)}`);
      batch.forEach((w) => w.reject(error));
      return;
    }
    const before = await repo.head();
    const committed: PendingWrite[] = [];
    const unchanged: PendingWrite[] = [];
    for (const w of batch) {
      const mark = await repo.head();
      try {
        await w.change();
        const sha = await repo.commit([w.repoPath], sanitizeMessage(w.opts.message), userIdentity(w.opts.actor));
        (sha ? committed : unchanged).push(w);
      } catch (err) {
        // Only this write failed (its file could not be written): undo it, keep the others.
        await repo.resetTo(mark).catch((e: unknown) => this.#log.error({ err: gitMessage(e) }, 'git: could not reset the clone'));
        w.reject(err instanceof UnavailableError || err instanceof ValidationError ? err : new UnavailableError(`git: could not record ${w.relPath}: ${gitMessage(err)}`));
      }
    }
    if (committed.length === 0) {
      unchanged.forEach((w) => w.resolve({ revision: before ?? undefined }));
      return;
    }
    try {
      const { rebased } = await publish(repo, { sleep: this.#o.sleep, random: this.#o.random, attempts: this.#o.attempts });
      const revision = (await repo.head()) ?? undefined;
      this.#log.info({ commits: committed.length, revision, rebased, message: committed.map((w) => w.opts.message).join('; ') }, 'git: pushed');
      if (rebased) this.#o.onRemoteMoved?.();
      [...committed, ...unchanged].forEach((w) => w.resolve({ revision }));
    } catch (err) {
      await repo.resetTo(before).catch((e: unknown) => this.#log.error({ err: gitMessage(e) }, 'git: could not reset the clone'));
      const error = err instanceof UnavailableError ? err : new UnavailableError(`git: could not push: ${gitMessage(err)}`);
      committed.forEach((w) => w.reject(error));
      // Their content was never pushed either way: the reset took it back, so they must retry too.
      unchanged.forEach((w) => w.reject(error));
    }
  }
}
