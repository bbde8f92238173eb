import { randomBytes } from 'node:crypto';
import { statSync } from 'node:fs';
import { mkdir, readdir, rename, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UnavailableError } from '../errors.ts';
import type { ManifestWriter } from '../types.ts';
import { DirectorySyncs } from './dir-sync.ts';
import { closeFd, fsyncFd, openFd, writeAll } from './fd.ts';
import { safeManifestPath } from './paths.ts';
import { caseTwin, ownChange, refuseCaseTwin, type OwnChange } from './case-twin.ts';

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

/** Runs a change to the entries of the written file's folder (see `ownChange` in case-twin.ts). */
type ChangeHook = <T>(change: OwnChange, op: () => Promise<T>) => Promise<T>;
const untracked: ChangeHook = (_change, op) => op();

/**
 * writeFileAtomic, answering the first folder it had to create (undefined when the folder was
 * there). `change` runs each step that changes the folder's entries: the temp file made, renamed
 * into place, or removed after a failure.
 */
async function writeAtomic(abs: string, content: string, change: ChangeHook = untracked): Promise<string | undefined> {
  const dir = dirname(abs);
  const tmp = join(dir, `.${tempName()}.tmp`);
  let fd: number;
  let created: string | undefined;
  try {
    fd = await change('temp', () => openFd(tmp, 'w', 0o644));
  } catch (err) {
    // The folder is made on first use only (no mkdir per write on the hot path).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    created = await mkdir(dir, { recursive: true });
    fd = await change('temp', () => openFd(tmp, 'w', 0o644));
  }
  try {
    try {
      await writeAll(fd, Buffer.from(content));
      await fsyncFd(fd);
    } finally {
      await closeFd(fd);
    }
    await change('add', () => rename(tmp, abs));
  } catch (err) {
    // A failed write (disk full, file too large) must not leave its temp file behind.
    await change('temp', () => unlink(tmp)).catch(() => {});
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
    try {
      // Each change to the folder's entries keeps its remembered listing current (case-twin.ts).
      created = await writeAtomic(abs, content, (change, op) => ownChange(this.#root, relPath, change, op));
    } catch (err) {
      throw new UnavailableError(`could not write ${relPath}: ${(err as Error).message}`);
    }
    try {
      // New folders' own entries too, from the first one made down to the file's folder.
      const folders = created ? foldersFrom(dirname(created), dir) : [dir];
      await Promise.all(folders.map((f) => this.#syncs.sync(f)));
    } catch (err) {
      throw new UnavailableError(`could not write ${relPath}: ${(err as Error).message}`);
    }
  }

  async remove(relPath: string): Promise<void> {
    const abs = safeManifestPath(this.#root, relPath);
    try {
      await ownChange(this.#root, relPath, 'remove', () => unlink(abs));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new UnavailableError(`could not remove ${relPath}: ${(err as Error).message}`);
    }
  }

  caseTwin(relPath: string): Promise<string | undefined> {
    return caseTwin(this.#root, relPath);
  }

  /** Read synchronously: one stat of a name in a folder the system has cached, less than a trip through the thread pool. */
  async exists(relPath: string): Promise<boolean> {
    try {
      return statSync(safeManifestPath(this.#root, relPath), { throwIfNoEntry: false }) !== undefined;
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
