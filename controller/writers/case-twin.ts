import { readdirSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ValidationError } from '../errors.ts';
import { safeManifestPath } from './paths.ts';

/** The name in `entries` that differs from `relPath`'s file name only by case, as a path beside it. */
function twinAmong(entries: string[] | undefined, relPath: string, abs: string): string | undefined {
  const name = basename(abs);
  const lower = name.toLowerCase();
  const twin = entries?.find((e) => e !== name && e.toLowerCase() === lower);
  return twin === undefined ? undefined : relPath.slice(0, relPath.length - name.length) + twin;
}

/**
 * The file beside `relPath` whose name differs from it only by case (`Regional-Sales.yaml` for
 * `regional-sales.yaml`), if any: on macOS and Windows both names are one file, so writing one
 * would overwrite the other when the folder is checked out there.
 */
export async function caseTwin(root: string, relPath: string): Promise<string | undefined> {
  const abs = safeManifestPath(root, relPath);
  return twinAmong(await readdir(dirname(abs)).catch(() => undefined), relPath, abs);
}

/** The same, read synchronously: for a writer whose queue order is the order of its calls (git batches). */
export function caseTwinSync(root: string, relPath: string): string | undefined {
  const abs = safeManifestPath(root, relPath);
  let entries: string[] | undefined;
  try {
    entries = readdirSync(dirname(abs));
  } catch {
    entries = undefined;
  }
  return twinAmong(entries, relPath, abs);
}

/** Refuses (400) a write to `relPath` when a file differing from it only by case exists. */
export async function refuseCaseTwin(root: string, relPath: string): Promise<void> {
  refuseTwin(relPath, await caseTwin(root, relPath));
}

/** The refusal of a write whose name differs only by case from `twin` (none when undefined). */
export function refuseTwin(relPath: string, twin: string | undefined): void {
  if (twin) {
    throw new ValidationError(
      [{ path: '', message: `${relPath} differs only by case from the existing ${twin} (one file on macOS and Windows): choose another name` }],
    );
  }
}
