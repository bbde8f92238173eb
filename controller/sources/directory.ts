import { mkdir } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { realScheduler, type Cancel, type Scheduler } from '../clock.ts';
import { isManifestPath } from '../manifest/loader.ts';
import type { ManifestSource, SourceSink } from '../types.ts';
import { listManifestPaths } from './list.ts';

export interface DirectorySourceOptions {
  root: string;
  /** Quiet time that closes a batch of changes (editors' atomic saves, `git checkout`, `rm -r`). */
  debounceMs?: number;
  scheduler?: Scheduler;
  onError?: (err: Error) => void;
}

/**
 * Watches a folder with chokidar. A burst of events is coalesced into one delta; a path
 * unlinked and re-added inside the burst (an atomic save) arrives as a change.
 */
export class DirectorySource implements ManifestSource {
  readonly root: string;
  readonly #debounceMs: number;
  readonly #scheduler: Scheduler;
  readonly #onError: (err: Error) => void;
  #watcher: FSWatcher | undefined;
  #sink: SourceSink | undefined;
  #pending = new Map<string, 'changed' | 'removed'>();
  #timer: Cancel | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(opts: DirectorySourceOptions) {
    this.root = opts.root;
    this.#debounceMs = opts.debounceMs ?? 75;
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.#onError = opts.onError ?? (() => {});
  }

  async start(sink: SourceSink): Promise<void> {
    this.#sink = sink;
    await mkdir(this.root, { recursive: true });
    const watcher = watch(this.root, {
      ignoreInitial: true,
      persistent: true,
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
    await this.resync();
    await ready;
    await this.resync();
  }

  async resync(): Promise<void> {
    if (!this.#sink) return;
    await this.#sink.full(await listManifestPaths(this.root));
  }

  async stop(): Promise<void> {
    this.#timer?.();
    await this.#watcher?.close();
    await this.#flushing;
  }

  #record(abs: string, kind: 'changed' | 'removed' | 'removed-dir'): void {
    const rel = relative(this.root, abs).split(sep).join('/');
    if (kind === 'removed-dir') {
      // chokidar reports the folder; the files in it were ours.
      for (const p of [...this.#pending.keys()]) if (p.startsWith(`${rel}/`)) this.#pending.set(p, 'removed');
      this.#pending.set(`${rel}/`, 'removed');
    } else if (isManifestPath(rel)) {
      this.#pending.set(rel, kind);
    } else return;
    this.#timer?.();
    this.#timer = this.#scheduler(() => {
      this.#flushing = this.#flushing.then(() => this.#flush());
    }, this.#debounceMs);
  }

  async #flush(): Promise<void> {
    const batch = this.#pending;
    this.#pending = new Map();
    const sink = this.#sink;
    if (!sink || batch.size === 0) return;
    const changed = [...batch].filter(([, k]) => k === 'changed').map(([p]) => p);
    const removed = [...batch].filter(([p, k]) => k === 'removed' && !p.endsWith('/')).map(([p]) => p);
    try {
      if ([...batch.keys()].some((p) => p.endsWith('/'))) {
        // A folder went away: a full relist finds every file that went with it.
        await sink.full(await listManifestPaths(this.root));
      } else {
        await sink.delta(changed, removed);
      }
    } catch (err) {
      this.#onError(err instanceof Error ? err : new Error(String(err)));
    }
  }
}
