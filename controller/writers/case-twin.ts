import { readdirSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ValidationError } from '../errors.ts';
import { safeManifestPath } from './paths.ts';

/**
 * The names of a folder by their lower case, as of the folder's modification time: a check reads
 * the folder again only when it changed since (one stat instead of a listing of every dashboard per
 * import), or when the listing is older than LISTING_MAX_AGE_MS. The API's writer keeps it current
 * through its own changes, however many are in flight (`ownChange`): each one's name goes into the
 * listing and the folder's time is noted the moment its completion reaches the event loop, so a
 * time that moved only by the writer's own changes never makes a check read the folder.
 */
interface Listing {
  mtimeNs: bigint;
  /** Lower-case name → the name, or the names when the folder already holds twins. */
  byLower: Map<string, string | string[]>;
  readAt: number;
}
const LISTINGS = new Map<string, Listing>();
/** Folders remembered at most (the manifests' kind folders are a handful). */
const MAX_LISTINGS = 256;
/**
 * A listing kept current by the writer's own changes is read again after this long anyway: a change
 * by someone else that fell while one of ours was in flight (its note adopts the folder's time) is
 * found within it.
 */
const LISTING_MAX_AGE_MS = 1000;
/** A listing no check may use: the next one reads the folder. */
const UNUSABLE = -1n;
/**
 * How many times a check that finds the folder's time moved while changes of ours are in flight
 * waits for them (their notes may account for the move) before it reads the folder.
 */
const WAIT_ROUNDS = 3;

/** Per folder: the names being renamed into it by the writer (counted; until their change completes). */
const LANDING = new Map<string, Map<string, number>>();
/** Per folder: the writer's changes to its entries whose completion has not reached the event loop yet. */
const IN_FLIGHT = new Map<string, Set<Promise<unknown>>>();

let reads = 0;

/** How many times a check read a folder's listing in this process (what the remembered listing saves; tests and the bench). */
export function folderReads(): number {
  return reads;
}

/** The folder's modification time, read now; undefined when it cannot be read (no folder). */
function folderTime(dir: string): bigint | undefined {
  return statSync(dir, { bigint: true, throwIfNoEntry: false })?.mtimeNs;
}

/**
 * Reads the folder (synchronously: no change of ours completes between the stat and the listing,
 * so the listing holds each of our renames that landed before it, the others being in LANDING).
 */
function read(dir: string): Listing | undefined {
  const mtimeNs = folderTime(dir);
  if (mtimeNs === undefined) return undefined;
  reads++;
  const byLower = new Map<string, string | string[]>();
  for (const n of readdirSync(dir)) addName(byLower, n);
  const listing = { mtimeNs, byLower, readAt: performance.now() };
  if (LISTINGS.size >= MAX_LISTINGS && !LISTINGS.has(dir)) LISTINGS.delete(LISTINGS.keys().next().value as string);
  LISTINGS.set(dir, listing);
  return listing;
}

function addName(byLower: Map<string, string | string[]>, name: string): void {
  const k = name.toLowerCase();
  const had = byLower.get(k);
  if (had === undefined) byLower.set(k, name);
  else if (typeof had === 'string') {
    if (had !== name) byLower.set(k, [had, name]);
  } else if (!had.includes(name)) had.push(name);
}

function deleteName(byLower: Map<string, string | string[]>, name: string): void {
  const k = name.toLowerCase();
  const had = byLower.get(k);
  if (had === name) byLower.delete(k);
  else if (Array.isArray(had)) {
    const rest = had.filter((n) => n !== name);
    if (rest.length === 1) byLower.set(k, rest[0]);
    else byLower.set(k, rest);
  }
}

/**
 * The remembered listing of `dir` if a check may use it now; 'stale' when the folder must be read
 * (or changes of ours in flight may account for its time); undefined when there is no folder.
 */
function current(dir: string): Listing | 'stale' | undefined {
  const mtimeNs = folderTime(dir);
  if (mtimeNs === undefined) return undefined;
  const listing = LISTINGS.get(dir);
  return listing?.mtimeNs === mtimeNs && performance.now() - listing.readAt < LISTING_MAX_AGE_MS ? listing : 'stale';
}

/** The twin of `relPath` among the listing and the names being renamed into its folder. */
function twinOf(listing: Listing | undefined, dir: string, relPath: string, abs: string): string | undefined {
  const name = basename(abs);
  const lower = name.toLowerCase();
  const beside = (twin: string) => relPath.slice(0, relPath.length - name.length) + twin;
  const names = listing?.byLower.get(lower);
  if (names !== undefined) {
    for (const twin of typeof names === 'string' ? [names] : names) if (twin !== name) return beside(twin);
  }
  const landing = LANDING.get(dir);
  if (!landing) return undefined;
  for (const n of landing.keys()) if (n !== name && n.toLowerCase() === lower) return beside(n);
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
  let listing: Listing | 'stale' | undefined;
  try {
    listing = current(dir);
    for (let round = 0; listing === 'stale' && round < WAIT_ROUNDS; round++) {
      // The time moved, maybe only by changes of ours whose completion is on its way: waiting for
      // them (each notes the time as it completes) costs less than reading the folder.
      const inFlight = IN_FLIGHT.get(dir);
      const remembered = LISTINGS.get(dir);
      if (!inFlight?.size || !remembered || remembered.mtimeNs === UNUSABLE || performance.now() - remembered.readAt >= LISTING_MAX_AGE_MS) break;
      await Promise.allSettled([...inFlight]);
      listing = current(dir);
    }
    if (listing === 'stale') listing = read(dir);
  } catch {
    listing = undefined;
  }
  return twinOf(listing, dir, relPath, abs);
}

/** The same, read synchronously: for a writer whose queue order is the order of its calls (git batches). */
export function caseTwinSync(root: string, relPath: string): string | undefined {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  let listing: Listing | 'stale' | undefined;
  try {
    listing = current(dir);
    if (listing === 'stale') listing = read(dir);
  } catch {
    listing = undefined;
  }
  return twinOf(listing, dir, relPath, abs);
}

/**
 * What a change of the writer's own does to the names of `relPath`'s folder: `temp` makes or
 * removes a temp file (never a twin: no name changes), `add` renames a file to `relPath`, `remove`
 * removes `relPath`.
 */
export type OwnChange = 'temp' | 'add' | 'remove';

/**
 * Runs `op`, a change of the writer's own to the entries of `relPath`'s folder, keeping the
 * folder's remembered listing current: while it is in flight a check that finds the folder's time
 * moved waits for it, an `add`'s name counts as there (its rename may land before its completion
 * is seen), and on completion the name goes into (or out of) the listing and the folder's time as
 * read then becomes the listing's. A change started while none of ours is in flight first compares
 * the folder's time with the listing's: any difference is someone else's change, and the next
 * check reads the folder. A failed change, or anything uncertain, does the same.
 */
export function ownChange<T>(root: string, relPath: string, change: OwnChange, op: () => Promise<T>): Promise<T> {
  const abs = safeManifestPath(root, relPath);
  const dir = dirname(abs);
  const name = basename(abs);
  let inFlight = IN_FLIGHT.get(dir);
  const listing = LISTINGS.get(dir);
  if (listing && listing.mtimeNs !== UNUSABLE && !inFlight?.size) {
    // Every change of ours so far is noted: a time other than the listing's is someone else's.
    if (safeTime(dir) !== listing.mtimeNs) listing.mtimeNs = UNUSABLE;
  }
  if (!inFlight) IN_FLIGHT.set(dir, (inFlight = new Set()));
  const flying = inFlight;
  if (change === 'add') {
    let landing = LANDING.get(dir);
    if (!landing) LANDING.set(dir, (landing = new Map()));
    landing.set(name, (landing.get(name) ?? 0) + 1);
  }
  const settle = (ok: boolean) => {
    const now = LISTINGS.get(dir);
    if (now && now.mtimeNs !== UNUSABLE) {
      if (!ok) now.mtimeNs = UNUSABLE;
      else {
        if (change === 'add') addName(now.byLower, name);
        else if (change === 'remove') deleteName(now.byLower, name);
        now.mtimeNs = safeTime(dir) ?? UNUSABLE;
      }
    }
    if (change === 'add') {
      const landing = LANDING.get(dir);
      const n = (landing?.get(name) ?? 0) - 1;
      if (n > 0) landing?.set(name, n);
      else landing?.delete(name);
      if (landing?.size === 0) LANDING.delete(dir);
    }
    flying.delete(tracked);
    if (flying.size === 0 && IN_FLIGHT.get(dir) === flying) IN_FLIGHT.delete(dir);
  };
  const tracked: Promise<T> = op().then(
    (value) => {
      settle(true);
      return value;
    },
    (err: unknown) => {
      settle(false);
      throw err;
    },
  );
  flying.add(tracked);
  return tracked;
}

/** folderTime, never throwing (undefined when it cannot be read). */
function safeTime(dir: string): bigint | undefined {
  try {
    return folderTime(dir);
  } catch {
    return undefined;
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
