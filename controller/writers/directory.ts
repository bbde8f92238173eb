import { randomBytes } from 'node:crypto';
import { mkdir, open, readdir, rename, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { UnavailableError } from '../errors.ts';
import type { ManifestWriter } from '../types.ts';
import { safeManifestPath } from './paths.ts';

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

/** Writes `content` to `abs` atomically: temp file in the same folder, fsync, rename. */
export async function writeFileAtomic(abs: string, content: string): Promise<void> {
  const dir = dirname(abs);
  const tmp = join(dir, `.${randomBytes(6).toString('hex')}.tmp`);
  let handle;
  try {
    handle = await open(tmp, 'w', 0o644);
  } catch (err) {
    // The folder is made on first use only (no mkdir per write on the hot path).
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dir, { recursive: true });
    handle = await open(tmp, 'w', 0o644);
  }
  try {
    try {
      await handle.writeFile(content);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, abs);
  } catch (err) {
    // A failed write (disk full, file too large) must not leave its temp file behind.
    await unlink(tmp).catch(() => {});
    throw err;
  }
}

/** The API's writer in directory mode: files under the manifests root. */
export class DirectoryWriter implements ManifestWriter {
  readonly #root: string;

  constructor(opts: { root: string }) {
    this.#root = opts.root;
  }

  async write(relPath: string, content: string): Promise<void> {
    const abs = safeManifestPath(this.#root, relPath);
    try {
      await writeFileAtomic(abs, content);
    } catch (err) {
      throw new UnavailableError(`could not write ${relPath}: ${(err as Error).message}`);
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

  async exists(relPath: string): Promise<boolean> {
    try {
      await stat(safeManifestPath(this.#root, relPath));
      return true;
    } catch {
      return false;
    }
  }
}
