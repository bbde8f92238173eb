import { readdirSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ValidationError } from '../errors.ts';
import { safeManifestPath } from './paths.ts';

/**
 * The names of a folder by their lower case, as of the folder's modification time: a check reads
 * the folder again only when it changed since (one stat instead of a listing of every dashboard per
 * import), and the writer's own writes are noted without a listing (noteWritten).
 */
interface Listing {
  mtimeNs: bigint;
  byLower: Map<string, Set<string>>;
}
const LISTINGS = new Map<string, Listing>();
/** Folders remembered at most (the manifests' kind folders are a handful). */
const MAX_LISTINGS = 256;

function remember(dir: string, mtimeNs: bigint, names: string[]): Listing {
  const byLower = new Map<string, Set<string>>();
  for (const n of names) {
    const k = n.toLowerCase();
    const set = byLower.get(k);
    if (set) set.add(n);
    else byLower.set(k, new Set([n]));
  }
  const listing = { mtimeNs, byLower };
  if (LISTINGS.size >= MAX_LISTINGS && !LISTINGS.has(dir)) LISTINGS.delete(LISTINGS.keys().next().value as string);
  LISTINGS.set(dir, listing);
  return listing;
}

/** The name in `listing` that differs from `relPath`'s file name only by case, as a path beside it. */
function twinAmong(listing: Listing | undefined, relPath: string, abs: string): string | undefined {
  const name = basename(abs);
  const names = listing?.byLower.get(name.toLowerCase());
  if (!names) return undefined;
  for (const twin of names) if (twin !== name) return relPath.slice(0, relPath.length - name.length) + twin;
  return undefined;
}

/**
 * The file beside `relPath` whose name differs from it only by case (`Regional-Sales.yaml` for
 * `regional-sales.yaml`), if any: on macOS and Windows both names are one file, so writing one
 * would overwrite the other when the folder is checked out there.
 */
export async function caseTwin(root: string, relPath: string): Promise<string | undefined> {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  let listing: Listing | undefined;
  try {
    const { mtimeNs } = await stat(dir, { bigint: true });
    listing = LISTINGS.get(dir);
    if (listing?.mtimeNs !== mtimeNs) listing = remember(dir, mtimeNs, await readdir(dir));
  } catch {
    listing = undefined;
  }
  return twinAmong(listing, relPath, abs);
}

/** The same, read synchronously: for a writer whose queue order is the order of its calls (git batches). */
export function caseTwinSync(root: string, relPath: string): string | undefined {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  let listing: Listing | undefined;
  try {
    const { mtimeNs } = statSync(dir, { bigint: true });
    listing = LISTINGS.get(dir);
    if (listing?.mtimeNs !== mtimeNs) listing = remember(dir, mtimeNs, readdirSync(dir));
  } catch {
    listing = undefined;
  }
  return twinAmong(listing, relPath, abs);
}

/** Writes in flight per folder (between beginWrite and endWrite), across every writer of this process. */
const WRITING = new Map<string, number>();

/**
 * A write to `relPath` starts: answers the folder's time as last listed, for endWrite. Every
 * beginWrite is followed by one endWrite (in a finally).
 */
export function beginWrite(root: string, relPath: string): bigint | undefined {
  const dir = dirname(safeManifestPath(root, relPath));
  WRITING.set(dir, (WRITING.get(dir) ?? 0) + 1);
  return LISTINGS.get(dir)?.mtimeNs;
}

/**
 * The write to `relPath` ended. When it was the only write to its folder in flight and the folder
 * was listed just before it (`listedAt`), the listing takes the new name and the folder's new time,
 * so the next check needs no listing; otherwise (another write at the same time, a change by
 * someone else, a failed write) the listing is left as it was and the next check reads the
 * folder again, its time having moved on.
 */
export async function endWrite(root: string, relPath: string, listedAt: bigint | undefined, written: boolean): Promise<void> {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  const listing = LISTINGS.get(dir);
  // Whatever cannot be noted for certain makes the listing unusable: the next check reads the folder.
  const forget = () => {
    if (listing) listing.mtimeNs = -1n;
  };
  try {
    if (!listing || listedAt === undefined || listing.mtimeNs !== listedAt) return;
    if (!written || WRITING.get(dir) !== 1) return forget();
    const { mtimeNs } = await stat(dir, { bigint: true });
    // Another write may have begun while the stat was read: then its change may be in that time.
    if (WRITING.get(dir) !== 1 || listing.mtimeNs !== listedAt) return forget();
    const name = basename(abs);
    const k = name.toLowerCase();
    const set = listing.byLower.get(k);
    if (set) set.add(name);
    else listing.byLower.set(k, new Set([name]));
    listing.mtimeNs = mtimeNs;
  } catch {
    forget();
  } finally {
    const n = (WRITING.get(dir) ?? 1) - 1;
    if (n > 0) WRITING.set(dir, n);
    else WRITING.delete(dir);
  }
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
