import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UnavailableError } from '../errors.ts';
import type { ManifestWriter } from '../types.ts';
import { DirectorySyncs } from './dir-sync.ts';
import { closeFd, fsyncFd, openFd, writeAll } from './fd.ts';
import { safeManifestPath } from './paths.ts';
import { caseTwin, endWrite, noteFolderTime, refuseCaseTwin, renaming } from './case-twin.ts';

/** The name `writeFileAtomic` gives its temp files (and nothing else has). */
const TEMP_FILE = /^\.[0-9a-f]{12}\.tmp$/;

/**
 * Removes the temp files of writes a crash interrupted (only names `writeFileAtomic` makes,
 * never a user's file), anywhere under `root`; returns their paths. Called at start.
 */
export async function removeStaleTempFiles(root: string): Promise<string[]> {
  const removed: string[] = [];
  let entries;
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return removed;
    throw err;
  }
  for (const e of entries) {
    if (!e.isFile() || !TEMP_FILE.test(e.name)) continue;
    const abs = join(e.parentPath, e.name);
    await unlink(abs).catch(() => {});
    removed.push(abs);
  }
  return removed;
}

/** 48 bits: random at start (another process writing beside this one), then counted (no random bytes per write). */
const TEMP_NAMES = 2 ** 48;
let nextTemp = randomBytes(6).readUIntBE(0, 6);

/** The next temp file name of this process: 12 hex digits, none repeated before 2^48 writes. */
function tempName(): string {
  nextTemp = (nextTemp + 1) % TEMP_NAMES;
  return nextTemp.toString(16).padStart(12, '0');
}

/** Writes `content` to `abs` atomically: temp file in the same folder, fsync, rename. */
export async function writeFileAtomic(abs: string, content: string): Promise<void> {
  await writeAtomic(abs, content);
}

/**
 * writeFileAtomic, answering the first folder it had to create (undefined when the folder was
 * there). `hooks.opened` is told once the temp file exists, `hooks.renaming` just before the rename.
 */
async function writeAtomic(abs: string, content: string, hooks: { opened?: () => void; renaming?: () => void } = {}): Promise<string | undefined> {
  const dir = dirname(abs);
  const tmp = join(dir, `.${tempName()}.tmp`);
  let fd: number;
  let created: string | undefined;
  try {
    fd = await openFd(tmp, 'w', 0o644);
  } catch (err) {
    // The folder is made on first use only (no mkdir per write on the hot path).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    created = await mkdir(dir, { recursive: true });
    fd = await openFd(tmp, 'w', 0o644);
  }
  hooks.opened?.();
  try {
    try {
      await writeAll(fd, Buffer.from(content));
      await fsyncFd(fd);
    } finally {
      await closeFd(fd);
    }
    hooks.renaming?.();
    await rename(tmp, abs);
  } catch (err) {
    // A failed write (disk full, file too large) must not leave its temp file behind.
    await unlink(tmp).catch(() => {});
    throw err;
  }
  return created;
}

/**
 * The API's writer in directory mode: files under the manifests root. A write is acknowledged
 * once durable: the file fsynced before its rename, then its folder fsynced (shared by the
 * writes that arrive together, DirectorySyncs), so neither a kill -9 nor a power loss takes back
 * an answered write.
 */
export class DirectoryWriter implements ManifestWriter {
  readonly #root: string;
  readonly #syncs: DirectorySyncs;

  constructor(opts: { root: string; syncs?: DirectorySyncs }) {
    this.#root = opts.root;
    this.#syncs = opts.syncs ?? new DirectorySyncs();
    // Told of each durable write before it is answered (the folder source can expect its echo).
  }

  async write(relPath: string, content: string): Promise<void> {
    const abs = safeManifestPath(this.#root, relPath);
    await refuseCaseTwin(this.#root, relPath);
    const dir = dirname(abs);
    let created: string | undefined;
    // The temp file moves the folder's time: noted at once, so checks meanwhile need not read the folder.
    let opened: Promise<void> | undefined;
    try {
      created = await writeAtomic(abs, content, {
        opened: () => (opened = noteFolderTime(this.#root, relPath)),
        renaming: () => renaming(this.#root, relPath),
      });
    } catch (err) {
      await opened;
      await endWrite(this.#root, relPath, false);
      throw new UnavailableError(`could not write ${relPath}: ${(err as Error).message}`);
    }
    // The name is noted into the folder's remembered listing right after the rename (beside the
    // folder's fsync): checks meanwhile count it as landing.
    const noted = endWrite(this.#root, relPath, true);
    try {
      // New folders' own entries too, from the first one made down to the file's folder.
      const folders = created ? foldersFrom(dirname(created), dir) : [dir];
      await Promise.all(folders.map((f) => this.#syncs.sync(f)));
    } catch (err) {
      throw new UnavailableError(`could not write ${relPath}: ${(err as Error).message}`);
    } finally {
      await Promise.all([opened, noted]);
    }
  }

  async remove(relPath: string): Promise<void> {
    const abs = safeManifestPath(this.#root, relPath);
    try {
      await unlink(abs);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new UnavailableError(`could not remove ${relPath}: ${(err as Error).message}`);
    }
  }

  caseTwin(relPath: string): Promise<string | undefined> {
    return caseTwin(this.#root, relPath);
  }

  async exists(relPath: string): Promise<boolean> {
    try {
      await stat(safeManifestPath(this.#root, relPath));
      return true;
    } catch {
      return false;
    }
  }
}

/** `to` and each folder above it, up to and with `from` (`to` lies under `from`). */
function foldersFrom(from: string, to: string): string[] {
  const out = [to];
  for (let d = to; d !== from && dirname(d) !== d; ) out.push((d = dirname(d)));
  return out;
}
