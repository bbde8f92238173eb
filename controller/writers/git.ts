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

/**
 * The API's writer in git mode: one commit per write, authored by the calling user, pushed at
 * once. When it cannot push, the clone is reset to where it was and UnavailableError (503) is
 * thrown, so the store and the clone stay as they were.
 */
export class GitWriter implements ManifestWriter {
  readonly #o: GitWriterOptions;
  readonly #log: Logger;

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

  #commit(relPath: string, opts: WriteOptions, change: () => Promise<void>): Promise<WriteResult> {
    const { repo, lock } = this.#o;
    const repoPath = this.#o.path ? `${this.#o.path}/${relPath}` : relPath;
    return lock.run(async () => {
      await repo.ensure().catch((err: unknown) => {
        throw new UnavailableError(`git: the working clone is not usable: ${gitMessage(err)}`);
      });
      const before = await repo.head();
      try {
        await change();
        const sha = await repo.commit([repoPath], sanitizeMessage(opts.message), userIdentity(opts.actor));
        if (!sha) return { revision: before ?? undefined };
        const { rebased } = await publish(repo, { sleep: this.#o.sleep, random: this.#o.random, attempts: this.#o.attempts });
        const revision = (await repo.head()) ?? undefined;
        this.#log.info({ path: repoPath, revision, rebased, message: opts.message }, 'git: pushed');
        if (rebased) this.#o.onRemoteMoved?.();
        return { revision };
      } catch (err) {
        await repo.resetTo(before).catch((e: unknown) => this.#log.error({ err: gitMessage(e) }, 'git: could not reset the clone'));
        if (err instanceof UnavailableError || err instanceof ValidationError) throw err;
        throw new UnavailableError(`git: could not record ${relPath}: ${gitMessage(err)}`);
      }
    });
  }
}
