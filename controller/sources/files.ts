import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, realpathSync, statSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { isSourcePath, MAX_MANIFEST_BYTES } from '../manifest/loader.ts';
import type { SourceFile } from '../reconciler/types.ts';

/** The status message of a path the reader refuses to open (docs/contract/design.md: filesystem boundary). */
export const NOT_A_REGULAR_FILE = 'not a regular file inside the manifests root';
export const TOO_LARGE = `file is larger than ${MAX_MANIFEST_BYTES / 1024 / 1024} MiB`;

const OPEN_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * The filesystem boundary of a manifests root: lists and reads regular files inside it only.
 * A symlink is read like its target when the target is a regular file inside the root; a symlink
 * leading outside (even onto the store), a FIFO, socket or device is never opened — its path is
 * delivered as unreadable, so nothing of its target reaches a status message, a log or the store.
 * Directory symlinks are not followed (no loops, no foreign trees).
 */
export class ManifestFiles {
  readonly root: string;
  #realRoot: string | undefined;

  constructor(root: string) {
    this.root = root;
  }

  /**
   * Every manifest path under the root (files, symlinks to files, special files), sorted.
   * Dot-folders are skipped; `dirs`, when given, receives every folder walked (relative paths);
   * `under` lists one folder of the tree only (a relative path).
   */
  async list(dirs?: Set<string>, under = ''): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string, rel: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const e of entries) {
        if (e.name.startsWith('.')) continue;
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          dirs?.add(r);
          await walk(join(dir, e.name), r);
        }
        else if (isSourcePath(r) && !(e.isSymbolicLink() && pointsToDirectory(join(dir, e.name)))) out.push(r);
      }
    };
    await walk(under ? join(this.root, under) : this.root, under);
    return out.sort();
  }

  /** Reads one path: its bytes, why it is refused, or null when nothing is there any more. */
  read(relPath: string): SourceFile | null {
    const abs = join(this.root, relPath);
    // The common case without resolving the whole path (realpath reads every component of it, the
    // root's own included, once per file: ~8 % of a 10,000-file sync): a plain relative path whose
    // folders inside the root are no symlinks is opened with O_NOFOLLOW, so a symlink at its end
    // fails (ELOOP) and takes the resolving path below, like every other path.
    if (isPlainPath(relPath) && !this.#linkedFolder(relPath)) {
      const fd = this.#open(abs, relPath);
      if (typeof fd === 'number') return readOpened(fd, relPath);
      if (fd !== 'link') return fd;
    }
    let real: string;
    try {
      real = realpathSync.native(abs);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ELOOP' && code !== 'ENOTDIR') throw err;
      // A dangling or looping symlink is still there and refused; a vanished file is gone.
      return existsAsLink(abs) ? { path: relPath, unreadable: NOT_A_REGULAR_FILE } : null;
    }
    if (!real.startsWith(this.#rootReal() + sep)) return { path: relPath, unreadable: NOT_A_REGULAR_FILE };
    const fd = this.#open(real, relPath);
    return typeof fd === 'number' ? readOpened(fd, relPath) : fd === 'link' ? { path: relPath, unreadable: NOT_A_REGULAR_FILE } : fd;
  }

  /** Opens without following a symlink at the end: the descriptor, 'link' (ELOOP), null (gone), or the refusal. */
  #open(path: string, relPath: string): number | 'link' | SourceFile | null {
    try {
      return openSync(path, OPEN_FLAGS);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return null;
      if (code === 'ELOOP') return 'link';
      // ENXIO: a FIFO without a writer.
      if (code === 'ENXIO') return { path: relPath, unreadable: NOT_A_REGULAR_FILE };
      throw err;
    }
  }

  /** Whether a folder of `relPath` below the root (not the root itself, nor the file) is a symlink (or not a folder). */
  #linkedFolder(relPath: string): boolean {
    let at = relPath.indexOf('/');
    while (at > 0) {
      try {
        if (!lstatSync(join(this.root, relPath.slice(0, at))).isDirectory()) return true;
      } catch {
        return true;
      }
      at = relPath.indexOf('/', at + 1);
    }
    return false;
  }

  /** Every manifest file, read lazily in listing order (a large tree never sits in memory). */
  async *readAll(paths?: string[]): AsyncGenerator<SourceFile> {
    for (const p of paths ?? (await this.list())) {
      const f = this.read(p);
      if (f) yield f;
    }
  }

  #rootReal(): string {
    this.#realRoot ??= realpathSync.native(this.root);
    return this.#realRoot;
  }
}

function pointsToDirectory(abs: string): boolean {
  try {
    return statSync(abs).isDirectory();
  } catch {
    return false;
  }
}

function existsAsLink(abs: string): boolean {
  try {
    return lstatSync(abs).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Reads an opened manifest file (and closes it): its bytes, or why it is refused. */
function readOpened(fd: number, relPath: string): SourceFile | null {
  try {
    const st = fstatSync(fd);
    if (st.isDirectory()) return null;
    if (!st.isFile()) return { path: relPath, unreadable: NOT_A_REGULAR_FILE };
    if (st.size > MAX_MANIFEST_BYTES) return { path: relPath, unreadable: TOO_LARGE };
    const buf = Buffer.allocUnsafe(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, buf, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    return { path: relPath, bytes: off === st.size ? buf : buf.subarray(0, off) };
  } finally {
    closeSync(fd);
  }
}

/** A relative path of plain names: no empty, '.' or '..' segment, not absolute. */
function isPlainPath(relPath: string): boolean {
  return relPath.length > 0 && !relPath.split('/').some((seg) => seg === '' || seg === '.' || seg === '..');
}
