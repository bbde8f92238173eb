import { lstatSync } from 'node:fs';
import { mkdir, realpath } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { AsyncSubscription, Event } from '@parcel/watcher';
import { realScheduler, type Cancel, type Scheduler } from '../clock.ts';
import { sha256 } from '../hash.ts';
import { isSourcePath } from '../manifest/loader.ts';
import { TimeSlice } from '../lib/time-slice.ts';
import { emptyReport, type SourceBatch, type SourceFile, type SourceSink, type SyncReport } from '../reconciler/types.ts';
import type { ManifestSource } from '../types.ts';
import { ManifestFiles } from './files.ts';
import { watchBackend } from './watch-backend.ts';

export interface DirectorySourceOptions {
  root: string;
  /** Watch the folder after the first sync (false: one-shot commands and tests sync on demand). */
  watch?: boolean;
  /**
   * Quiet time that closes a batch of changes (editors' atomic saves, `git checkout`, `rm -r`),
   * on top of the watcher's own batching (events less than 50 ms apart arrive together).
   */
  debounceMs?: number;
  /** Paths changed in one burst past which the folder is relisted once the burst is over (see BURST_RELIST_PATHS). */
  burstRelistPaths?: number;
  scheduler?: Scheduler;
  onError?: (err: Error) => void;
}

/**
 * inotify drops the events past its queue (`fs.inotify.max_queued_events`, 16,384 by default: an
 * atomic save makes about four) and @parcel/watcher does not report that overflow. So after a
 * burst of this many changed paths, once no batch came for BURST_QUIET_MS, the folder is relisted:
 * any file whose events were lost is found by its hash (0.2 s for 10,000 unchanged files).
 */
const BURST_RELIST_PATHS = 1000;
const BURST_QUIET_MS = 1000;

/** A path with a segment starting with a dot (relative to the root): neither watched nor read. */
const DOT_SEGMENT = /(^|\/)\./;
/**
 * The least time a batch holding a removal stays open after that removal's event. @parcel/watcher
 * hands the first event of a burst over at once and the rest in windows of 50 ms: a batch closed
 * before the second window would split one `rm` of many files into deltas that each stay under the
 * mass-prune guard's ratio. A batch of changes only (an editor's save) has no guard to feed and
 * closes after the debounce.
 */
const MIN_BATCH_AGE_MS = 60;
/** Reading between two turns of the event loop while a big batch of changes is read. */
const SLICE_MS = 8;
/** Notes of the API's own writes kept at most (a note goes when its file changes or goes). */
const MAX_OWN_WRITES = 10_000;

/**
 * A manifests folder. Reads through ManifestFiles (regular files inside the root only) and
 * watches with @parcel/watcher (inotify on Linux: one watch per folder, the tree walked and the
 * events batched in native code, symlinks never followed, dot-folders not watched). A burst of
 * events is coalesced into one delta; a path unlinked and re-added inside the burst (an atomic
 * save) arrives as a change. A folder that appears is listed (its files may predate its watch);
 * one that goes away makes a full relist (what it held is found gone that way). The API's own writes are noted (`noteOwnWrite`): their
 * events cost a read and a hash here and nothing in the reconciler.
 */
export class DirectorySource implements ManifestSource {
  readonly root: string;
  readonly #files: ManifestFiles;
  readonly #watch: boolean;
  readonly #debounceMs: number;
  readonly #scheduler: Scheduler;
  readonly #onError: (err: Error) => void;
  #subscription: AsyncSubscription | undefined;
  /** The real path of the root (what the events' paths start with). */
  #watchedRoot = '';
  #sink: SourceSink | undefined;
  /** Paths reported added, changed or removed since the last flush: each is read at the flush (there or gone). */
  #pending = new Set<string>();
  /** A folder went away (or events were lost): the next flush relists everything. */
  #relist = false;
  /** Folders that appeared: the next flush lists what they hold (created before their watch was in place). */
  #newDirs = new Set<string>();
  /** Folders under the root (relative), from the last full listing and the folders created since. */
  #dirs = new Set<string>();
  /** path → content hash of what the API itself wrote there (its reconcile is the API's). */
  readonly #own = new Map<string, string>();
  #timer: Cancel | undefined;
  /** Set while the open batch's first removal is younger than MIN_BATCH_AGE_MS; `#quiet` once its debounce ran out. */
  #young = false;
  /** The open batch holds a removal (its minimum age is running or ran out). */
  #removal = false;
  #quiet = false;
  #ageTimer: Cancel | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #stopped = false;
  readonly #burstRelistPaths: number;
  /** Distinct paths flushed since the last quiet second (counted up to the limit), and the timer that ends the burst. */
  #burstPaths = new Set<string>();
  #burstTimer: Cancel | undefined;

  constructor(opts: DirectorySourceOptions) {
    this.root = opts.root;
    this.#files = new ManifestFiles(opts.root);
    this.#watch = opts.watch ?? true;
    this.#debounceMs = opts.debounceMs ?? 30;
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.#burstRelistPaths = opts.burstRelistPaths ?? BURST_RELIST_PATHS;
    this.#onError = opts.onError ?? (() => {});
  }

  connect(sink: SourceSink): void {
    this.#sink = sink;
  }

  async start(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    if (this.#watch) {
      // Loaded on first use: one-shot commands never watch.
      const { subscribe } = await import('@parcel/watcher');
      // The root itself may be a symlink (inotify does not follow one): its target is watched.
      this.#watchedRoot = await realpath(this.root);
      this.#subscription = await subscribe(this.#watchedRoot, (err, events) => this.#onEvents(err, events), { ignore: [DOT_SEGMENT], ...watchBackend() });
    }
    // The watches are in place before the listing: whatever changes from here on arrives as events.
    await this.syncNow();
  }

  async syncNow(opts: { allowMassPrune?: boolean } = {}): Promise<SyncReport> {
    if (!this.#sink) return emptyReport();
    return this.#sink.apply({ ...(await this.snapshot()), allowMassPrune: opts.allowMassPrune });
  }

  async snapshot(): Promise<SourceBatch> {
    const dirs = new Set<string>();
    const paths = await this.#files.list(dirs);
    this.#dirs = dirs;
    return { type: 'full', files: this.#files.readAll(paths) };
  }

  read(path: string): SourceFile | null {
    return this.#files.read(path);
  }

  /**
   * The API wrote `content` with this SHA-256 at `path` and reconciles it itself: the watcher's
   * event for it is dropped while the file still has exactly that content (a later edit is not).
   */
  noteOwnWrite(path: string, hash: string): void {
    if (!this.#subscription) return;
    if (this.#own.size >= MAX_OWN_WRITES) this.#own.clear();
    this.#own.set(path, hash);
  }

  /** Changed or removed paths the watcher reported that wait for the open batch to close. */
  get waiting(): number {
    return this.#pending.size;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.();
    this.#ageTimer?.();
    this.#burstTimer?.();
    const sub = this.#subscription;
    this.#subscription = undefined;
    await sub?.unsubscribe();
    await this.#flushing;
  }

  #onEvents(err: Error | null, events: Event[]): void {
    if (this.#stopped) return;
    if (err) {
      this.#onError(err);
      this.#relist = true;
    }
    let removal = false;
    for (const e of events) {
      const rel = relative(this.#watchedRoot, e.path).split(sep).join('/');
      if (rel === '' || rel.startsWith('../') || DOT_SEGMENT.test(rel)) continue;
      if (e.type === 'delete') {
        if (this.#dirs.delete(rel)) removal = this.#relist = true;
        else if (isSourcePath(rel)) {
          this.#pending.add(rel);
          removal = true;
        }
      } else if (isSourcePath(rel)) {
        this.#pending.add(rel);
      } else if (e.type === 'create' && isDirectory(e.path)) {
        this.#newDirs.add(rel);
      }
    }
    if (this.#pending.size === 0 && this.#newDirs.size === 0 && !this.#relist) return;
    if (removal && !this.#removal) {
      this.#removal = true;
      this.#young = true;
      this.#ageTimer = this.#scheduler(() => {
        this.#young = false;
        if (this.#quiet) this.#close();
      }, MIN_BATCH_AGE_MS);
    }
    this.#quiet = false;
    this.#timer?.();
    this.#timer = this.#scheduler(() => {
      this.#quiet = true;
      if (!this.#young) this.#close();
    }, this.#debounceMs);
  }

  /** The batch is quiet and old enough: flush it (after any flush still running). */
  #close(): void {
    this.#timer = undefined;
    this.#quiet = false;
    this.#removal = false;
    this.#flushing = this.#flushing.then(() => this.#flush());
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    const relist = this.#relist;
    const newDirs = this.#newDirs;
    this.#pending = new Set();
    this.#relist = false;
    this.#newDirs = new Set();
    if (!this.#sink || (batch.size === 0 && newDirs.size === 0 && !relist)) return;
    if (!relist) this.#countBurst(batch);
    try {
      if (relist) {
        // A folder went away: a full relist finds every file that went with it.
        this.#own.clear();
        await this.syncNow();
        return;
      }
      for (const dir of newDirs) {
        // A folder moved in, or files written before its watch was in place: what it holds now.
        this.#dirs.add(dir);
        for (const path of await this.#files.list(this.#dirs, dir)) batch.add(path);
      }
      const files: SourceFile[] = [];
      const removed: string[] = [];
      let folderAppeared = false;
      // 5,000 changed files are read a slice at a time: HTTP keeps answering meanwhile.
      const slice = new TimeSlice(SLICE_MS);
      for (const path of batch) {
        await slice.tick();
        const own = this.#own.get(path);
        // What is there now decides, whatever the events said: a removal whose file is back (an
        // editor's save split across two batches of events) is a change, never a prune.
        const file = this.#files.read(path);
        if (file) {
          // The API's own write, still as it wrote it: the API reconciled it already. The note stays
          // while the file has that content (one write's events may fall into two batches).
          if (own === undefined || 'unreadable' in file || sha256(file.bytes) !== own) {
            this.#own.delete(path);
            files.push(file);
          }
        } else if (isDirectory(join(this.root, path))) {
          // A folder named like a manifest (`old.yaml/`): its files are found by a relist.
          folderAppeared = true;
        } else {
          this.#own.delete(path);
          removed.push(path);
        }
      }
      if (folderAppeared) await this.syncNow();
      else if (files.length || removed.length) await this.#sink.apply({ type: 'delta', files, removed, trickle: true });
    } catch (err) {
      this.#onError(err instanceof Error ? err : new Error(String(err)));
    }
  }

  /** Counts a flush into the current burst; a big burst ends with a relist (events may have been dropped). */
  #countBurst(paths: Set<string>): void {
    for (const p of paths) {
      if (this.#burstPaths.size >= this.#burstRelistPaths) break;
      this.#burstPaths.add(p);
    }
    this.#burstTimer?.();
    this.#burstTimer = this.#scheduler(() => {
      this.#burstTimer = undefined;
      const big = this.#burstPaths.size >= this.#burstRelistPaths;
      this.#burstPaths = new Set();
      if (!big || this.#stopped) return;
      this.#relist = true;
      // A batch still open flushes as the relist; otherwise the relist goes now.
      if (this.#timer === undefined && !this.#young) this.#close();
    }, BURST_QUIET_MS);
  }
}

function isDirectory(abs: string): boolean {
  return lstatSync(abs, { throwIfNoEntry: false })?.isDirectory() ?? false;
}
