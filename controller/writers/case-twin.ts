import { readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ValidationError } from '../errors.ts';
import { safeManifestPath } from './paths.ts';

/**
 * The file beside `relPath` whose name differs from it only by case (`Regional-Sales.yaml` for
 * `regional-sales.yaml`), if any: on macOS and Windows both names are one file, so writing one
 * would overwrite the other when the folder is checked out there.
 */
export async function caseTwin(root: string, relPath: string): Promise<string | undefined> {
  const abs = safeManifestPath(root, relPath);
  const name = basename(abs);
  const lower = name.toLowerCase();
  let entries: string[];
  try {
    entries = await readdir(dirname(abs));
  } catch {
    return undefined;
  }
  const twin = entries.find((e) => e !== name && e.toLowerCase() === lower);
  return twin === undefined ? undefined : relPath.slice(0, relPath.length - name.length) + twin;
}

/** Refuses (400) a write to `relPath` when a file differing from it only by case exists. */
export async function refuseCaseTwin(root: string, relPath: string): Promise<void> {
  const twin = await caseTwin(root, relPath);
  if (twin) {
    throw new ValidationError(
      [{ path: '', message: `${relPath} differs only by case from the existing ${twin} (one file on macOS and Windows): choose another name` }],
    );
  }
}
