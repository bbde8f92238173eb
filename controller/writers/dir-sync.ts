import { closeFd, fsyncFd, openFd } from './fd.ts';

/** Errors of filesystems that cannot fsync a directory (nothing more can be done there). */
const UNSUPPORTED = new Set(['EINVAL', 'ENOTSUP', 'EISDIR', 'EPERM']);

interface DirState {
  /** The fsync under way. */
  running?: Promise<void>;
  /** The next fsync, shared by every caller that asked while `running` was under way. */
  next?: Promise<void>;
}

/**
 * Group commit of directory entries: a rename is durable (survives a power loss) only once its
 * directory is fsynced. Writes that arrive together share one fsync of their folder: a caller
 * gets the fsync that starts after it asked — the one under way may have begun before its
 * rename — and every caller that asks while one runs shares the next. So N concurrent writes
 * cost one or two directory fsyncs, not N, and none is acknowledged before its entry is on disk.
 */
export class DirectorySyncs {
  readonly #dirs = new Map<string, DirState>();
  readonly #fsync: (dir: string) => Promise<void>;

  constructor(opts: { fsync?: (dir: string) => Promise<void> } = {}) {
    this.#fsync = opts.fsync ?? fsyncDirectory;
  }

  /** Resolves once an fsync of `dir` that started after this call has finished. */
  sync(dir: string): Promise<void> {
    let s = this.#dirs.get(dir);
    if (!s) this.#dirs.set(dir, (s = {}));
    const state = s;
    if (!state.running) return this.#start(dir, state);
    state.next ??= state.running
      .catch(() => {})
      .then(() => {
        state.next = undefined;
        return this.#start(dir, state);
      });
    return state.next;
  }

  #start(dir: string, state: DirState): Promise<void> {
    const p = this.#fsync(dir).finally(() => {
      if (state.running === p) state.running = undefined;
      if (!state.running && !state.next) this.#dirs.delete(dir);
    });
    state.running = p;
    return p;
  }
}

/** fsync of a directory (its entries: names created, renamed, removed). File descriptors, not a FileHandle: see fd.ts. */
export async function fsyncDirectory(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = await openFd(dir, 'r');
    await fsyncFd(fd);
  } catch (err) {
    if (!UNSUPPORTED.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    if (fd !== undefined) await closeFd(fd);
  }
}
