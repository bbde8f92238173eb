import { mkdir } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { realScheduler, type Cancel, type Scheduler } from '../clock.ts';
import { isManifestPath } from '../manifest/loader.ts';
import { emptyReport, type SourceBatch, type SourceFile, type SourceSink, type SyncReport } from '../reconciler/types.ts';
import type { ManifestSource } from '../types.ts';
import { ManifestFiles } from './files.ts';

export interface DirectorySourceOptions {
  root: string;
  /** Watch the folder after the first sync (false: one-shot commands and tests sync on demand). */
  watch?: boolean;
  /** Quiet time that closes a batch of changes (editors' atomic saves, `git checkout`, `rm -r`). */
  debounceMs?: number;
  scheduler?: Scheduler;
  onError?: (err: Error) => void;
}

/**
 * A manifests folder. Reads through ManifestFiles (regular files inside the root only) and
 * watches with chokidar: a burst of events is coalesced into one delta; a path unlinked and
 * re-added inside the burst (an atomic save) arrives as a change.
 */
export class DirectorySource implements ManifestSource {
  readonly root: string;
  readonly #files: ManifestFiles;
  readonly #watch: boolean;
  readonly #debounceMs: number;
  readonly #scheduler: Scheduler;
  readonly #onError: (err: Error) => void;
  #watcher: FSWatcher | undefined;
  #sink: SourceSink | undefined;
  #pending = new Map<string, 'changed' | 'removed' | 'removed-dir'>();
  #timer: Cancel | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(opts: DirectorySourceOptions) {
    this.root = opts.root;
    this.#files = new ManifestFiles(opts.root);
    this.#watch = opts.watch ?? true;
    this.#debounceMs = opts.debounceMs ?? 75;
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.#onError = opts.onError ?? (() => {});
  }

  connect(sink: SourceSink): void {
    this.#sink = sink;
  }

  async start(): Promise<void> {
    await mkdir(this.root, { recursive: true });
    if (!this.#watch) {
      await this.syncNow();
      return;
    }
    const watcher = watch(this.root, {
      ignoreInitial: true,
      persistent: true,
      // Symlinks are read (or refused) by ManifestFiles; chokidar must not walk into their targets.
      followSymlinks: false,
      ignored: (p: string) => {
        const rel = relative(this.root, p);
        return rel.split(sep).some((s) => s.startsWith('.') && s !== '.' && s !== '..');
      },
      // Our own debounce turns an editor's unlink+add into one change; chokidar's 100 ms `atomic` wait is not needed.
      awaitWriteFinish: false,
      atomic: false,
    });
    this.#watcher = watcher;
    const on = (kind: 'changed' | 'removed') => (p: string) => this.#record(p, kind);
    watcher.on('add', on('changed')).on('change', on('changed')).on('unlink', on('removed'));
    watcher.on('unlinkDir', (p: string) => this.#record(p, 'removed-dir'));
    watcher.on('error', (e: unknown) => this.#onError(e instanceof Error ? e : new Error(String(e))));
    const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
    // The first sync runs while chokidar walks the tree; a second (cheap: unchanged files cost a
    // hash) catches whatever changed before the watches were in place.
    await this.syncNow();
    await ready;
    await this.syncNow();
  }

  async syncNow(opts: { allowMassPrune?: boolean } = {}): Promise<SyncReport> {
    if (!this.#sink) return emptyReport();
    return this.#sink.apply({ ...(await this.snapshot()), allowMassPrune: opts.allowMassPrune });
  }

  async snapshot(): Promise<SourceBatch> {
    return { type: 'full', files: this.#files.readAll(await this.#files.list()) };
  }

  read(path: string): SourceFile | null {
    return this.#files.read(path);
  }

  async stop(): Promise<void> {
    this.#timer?.();
    await this.#watcher?.close();
    await this.#flushing;
  }

  #record(abs: string, kind: 'changed' | 'removed' | 'removed-dir'): void {
    const rel = relative(this.root, abs).split(sep).join('/');
    if (kind === 'removed-dir') this.#pending.set(`${rel}/`, 'removed-dir');
    else if (isManifestPath(rel)) this.#pending.set(rel, kind);
    else return;
    this.#timer?.();
    this.#timer = this.#scheduler(() => {
      this.#flushing = this.#flushing.then(() => this.#flush());
    }, this.#debounceMs);
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = new Map();
    if (!this.#sink || batch.size === 0) return;
    try {
      if ([...batch.values()].includes('removed-dir')) {
        // A folder went away: a full relist finds every file that went with it.
        await this.syncNow();
        return;
      }
      const changed = [...batch].filter(([, k]) => k === 'changed').map(([p]) => p);
      const removed = [...batch].filter(([, k]) => k === 'removed').map(([p]) => p);
      const files = changed.map((p) => this.#files.read(p)).filter((f): f is SourceFile => f !== null);
      // A path reported changed that is gone again by now is a removal.
      const gone = changed.filter((p) => !files.some((f) => f.path === p));
      await this.#sink.apply({ type: 'delta', files, removed: [...removed, ...gone] });
    } catch (err) {
      this.#onError(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
