import { readdirSync, statSync } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { ValidationError } from '../errors.ts';
import { safeManifestPath } from './paths.ts';

/**
 * The names of a folder by their lower case, as of the folder's modification time: a check reads
 * the folder again only when it changed since (one stat instead of a listing of every dashboard per
 * import), or when the listing is older than LISTING_MAX_AGE_MS. The API's writer keeps it current
 * through its own writes, however many are in flight: the folder's time is noted after each change
 * of its own (a temp file made: noteFolderTime; a manifest renamed into place: renaming, endWrite).
 */
interface Listing {
  mtimeNs: bigint;
  byLower: Map<string, Set<string>>;
  readAt: number;
}
const LISTINGS = new Map<string, Listing>();
/** Folders remembered at most (the manifests' kind folders are a handful). */
const MAX_LISTINGS = 256;
/**
 * A listing kept current by the writer's own writes is read again after this long anyway: a change
 * by someone else that fell between a check and a write's own note of the folder's time is found
 * within it.
 */
const LISTING_MAX_AGE_MS = 1000;
/** A listing no check may use: the next one reads the folder. */
const UNUSABLE = -1n;

/** Per folder: the names being renamed into it by the writer (between renaming and endWrite). */
const LANDING = new Map<string, Map<string, number>>();
/**
 * Per folder: how many of the writer's own writes were noted into its listing, and the names of the
 * last of them (at least NOTED_KEPT), for a listing read while they were noted (see caseTwin).
 */
const NOTED = new Map<string, { count: number; names: string[] }>();
const NOTED_KEPT = 256;

function remember(dir: string, mtimeNs: bigint, names: string[]): Listing {
  const byLower = new Map<string, Set<string>>();
  for (const n of names) addName(byLower, n);
  const listing = { mtimeNs, byLower, readAt: performance.now() };
  if (LISTINGS.size >= MAX_LISTINGS && !LISTINGS.has(dir)) LISTINGS.delete(LISTINGS.keys().next().value as string);
  LISTINGS.set(dir, listing);
  return listing;
}

function addName(byLower: Map<string, Set<string>>, name: string): void {
  const k = name.toLowerCase();
  const set = byLower.get(k);
  if (set) set.add(name);
  else byLower.set(k, new Set([name]));
}

/** The remembered listing of `dir`, if a check may use it with the folder's time `mtimeNs`. */
function usable(dir: string, mtimeNs: bigint): Listing | undefined {
  const listing = LISTINGS.get(dir);
  return listing?.mtimeNs === mtimeNs && performance.now() - listing.readAt < LISTING_MAX_AGE_MS ? listing : undefined;
}

/** The twin of `relPath` among the listing and the names being renamed into its folder. */
function twinOf(listing: Listing | undefined, dir: string, relPath: string, abs: string): string | undefined {
  const twin = twinAmong(listing, relPath, abs);
  if (twin) return twin;
  const landing = LANDING.get(dir);
  if (!landing) return undefined;
  const name = basename(abs);
  const lower = name.toLowerCase();
  for (const n of landing.keys()) if (n !== name && n.toLowerCase() === lower) return relPath.slice(0, relPath.length - name.length) + n;
  return undefined;
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
  const noted = NOTED.get(dir)?.count ?? 0;
  let listing: Listing | undefined;
  try {
    let { mtimeNs } = await stat(dir, { bigint: true });
    listing = usable(dir, mtimeNs);
    const noting = NOTING.get(dir);
    if (!listing && noting) {
      // The time moved, maybe only by writes of ours whose note is on its way: one more stat after
      // those notes costs less than reading the folder.
      await Promise.all(noting);
      ({ mtimeNs } = await stat(dir, { bigint: true }));
      listing = usable(dir, mtimeNs);
    }
    if (!listing) {
      listing = remember(dir, mtimeNs, await readdir(dir));
      // A write of ours noted meanwhile may have landed after the folder was read and left
      // LANDING: its name is added (when too many were, no later check may use the listing).
      const notes = NOTED.get(dir);
      const since = (notes?.count ?? 0) - noted;
      if (since > 0 && notes) {
        if (since > notes.names.length) listing.mtimeNs = UNUSABLE;
        else for (const n of notes.names.slice(-since)) addName(listing.byLower, n);
      }
    }
  } catch {
    listing = undefined;
  }
  return twinOf(listing, dir, relPath, abs);
}

/** The same, read synchronously: for a writer whose queue order is the order of its calls (git batches). */
export function caseTwinSync(root: string, relPath: string): string | undefined {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  let listing: Listing | undefined;
  try {
    const { mtimeNs } = statSync(dir, { bigint: true });
    listing = usable(dir, mtimeNs) ?? remember(dir, mtimeNs, readdirSync(dir));
  } catch {
    listing = undefined;
  }
  return twinOf(listing, dir, relPath, abs);
}

/**
 * The folder's time as read now becomes its listing's (when it has a usable one): every change of
 * the writer's own up to now is in the listing or still landing (LANDING, which every check reads
 * too), and temp files are never twins. Never throws: anything uncertain leaves the listing unusable.
 */
function noteTime(dir: string, listing: Listing | undefined = LISTINGS.get(dir)): Promise<void> {
  if (!listing || listing.mtimeNs === UNUSABLE) return Promise.resolve();
  let pending = NOTING.get(dir);
  if (!pending) NOTING.set(dir, (pending = new Set()));
  const noting = readTime(dir, listing).finally(() => {
    pending.delete(noting);
    if (pending.size === 0 && NOTING.get(dir) === pending) NOTING.delete(dir);
  });
  pending.add(noting);
  return noting;
}

/** Per folder: the notes of the folder's time in flight (a check that finds the time moved waits for them). */
const NOTING = new Map<string, Set<Promise<void>>>();

async function readTime(dir: string, listing: Listing): Promise<void> {
  try {
    const { mtimeNs } = await stat(dir, { bigint: true });
    // Read again meanwhile (that listing is newer) or made unusable: leave it as it is.
    if (LISTINGS.get(dir) === listing && listing.mtimeNs !== UNUSABLE) listing.mtimeNs = mtimeNs;
  } catch {
    listing.mtimeNs = UNUSABLE;
  }
}

/** The writer made a temp file beside `relPath` (no manifest name changed): see noteTime. */
export function noteFolderTime(root: string, relPath: string): Promise<void> {
  return noteTime(dirname(safeManifestPath(root, relPath)));
}

/**
 * The writer is about to rename a file to `relPath`: until endWrite, every check counts the name
 * as there (its rename may land before the folder's time is next noted).
 */
export function renaming(root: string, relPath: string): void {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  const name = basename(abs);
  let landing = LANDING.get(dir);
  if (!landing) LANDING.set(dir, (landing = new Map()));
  landing.set(name, (landing.get(name) ?? 0) + 1);
}

/**
 * The writer's write to `relPath` ended (`written`: the file is in place). Its name goes into the
 * folder's listing, and the folder's time as read now becomes the listing's: every change of ours
 * up to now is in the listing or still landing (LANDING, which every check reads too). A failed
 * write, or anything uncertain, makes the next check read the folder again.
 */
export async function endWrite(root: string, relPath: string, written: boolean): Promise<void> {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  const name = basename(abs);
  const forget = () => {
    const listing = LISTINGS.get(dir);
    if (listing) listing.mtimeNs = UNUSABLE;
  };
  try {
    if (!written) return forget();
    // Noted even without a listing: one being read now may have been read before the rename landed.
    let notes = NOTED.get(dir);
    if (!notes) NOTED.set(dir, (notes = { count: 0, names: [] }));
    notes.count++;
    notes.names.push(name);
    if (notes.names.length > 2 * NOTED_KEPT) notes.names.splice(0, NOTED_KEPT);
    const listing = LISTINGS.get(dir);
    if (!listing) return;
    addName(listing.byLower, name);
    await noteTime(dir, listing);
  } catch {
    forget();
  } finally {
    const landing = LANDING.get(dir);
    const n = (landing?.get(name) ?? 0) - 1;
    if (n > 0) landing?.set(name, n);
    else landing?.delete(name);
    if (landing?.size === 0) LANDING.delete(dir);
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
