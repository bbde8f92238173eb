import { stringify } from 'yaml';
import { realScheduler, systemClock, type Scheduler } from './clock.ts';
import type { Config } from './config.ts';
import { defaultAppliers } from './kinds/index.ts';
import { silentLogger, type Logger } from './log.ts';
import { SchemaRegistry } from './manifest/validator.ts';
import { KeyedMutex } from './mutex.ts';
import { Reconciler, type Outcome } from './reconciler/reconciler.ts';
import { DirectorySource } from './sources/directory.ts';
import { openStore, type Store } from './store/db.ts';
import { ACTOR_ANNOTATION, type Applier, type Clock, type Manifest, type ManifestSource, type ManifestWriter, type WriteOptions } from './types.ts';
import { DirectoryWriter } from './writers/directory.ts';
import { UnavailableError } from './errors.ts';

export interface RuntimeOptions {
  config: Config;
  log?: Logger;
  clock?: Clock;
  scheduler?: Scheduler;
  random?: () => number;
  appliers?: Applier[];
  /** Replace the folder watcher / file writer (git mode, tests). */
  source?: ManifestSource;
  writer?: ManifestWriter;
}

/** Hooks other parts register to run at shutdown (flush `lastUsedAt`, close git). */
export type ShutdownHook = () => Promise<void> | void;

/**
 * The controller's parts wired together: store, schemas, reconciler, source and writer.
 * `bictl serve` builds one and hands it to the API; tests build one on temp folders.
 */
export class Runtime {
  readonly config: Config;
  readonly db: Store;
  readonly schemas: SchemaRegistry;
  readonly reconciler: Reconciler;
  readonly source: ManifestSource;
  readonly writer: ManifestWriter;
  readonly clock: Clock;
  readonly log: Logger;
  /** Serializes API writes per object (`Client/ACME`). */
  readonly locks = new KeyedMutex();
  readonly #shutdown: ShutdownHook[] = [];
  #stopped = false;
  /** API writes in flight: stop() lets them finish before the store closes. */
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(opts: RuntimeOptions) {
    this.config = opts.config;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.log ?? silentLogger();
    this.db = openStore(opts.config.dbPath);
    this.schemas = new SchemaRegistry();
    this.source =
      opts.source ??
      new DirectorySource({
        root: opts.config.manifestsDir,
        scheduler: opts.scheduler ?? realScheduler,
        onError: (err) => this.log.error({ err: err.message }, 'watcher error'),
      });
    this.writer = opts.writer ?? new DirectoryWriter({ root: this.source.root });
    this.reconciler = new Reconciler({
      db: this.db,
      schemas: this.schemas,
      appliers: opts.appliers ?? defaultAppliers(),
      root: this.source.root,
      clock: this.clock,
      scheduler: opts.scheduler,
      random: opts.random,
    });
    this.reconciler.on('event', (e: { type: string; key: string; phase?: string; step?: string; message?: string }) => {
      if (e.type === 'step') this.log.debug({ key: e.key, step: e.step }, 'step');
      else if (e.phase === 'Failed' || e.phase === 'Invalid' || e.type === 'prune-blocked') this.log.warn({ key: e.key, phase: e.phase, message: e.message }, e.type);
      else this.log.info({ key: e.key, phase: e.phase }, 'reconciled');
    });
  }

  /** Starts the source: its first full sync, then watching (or polling). */
  async start(): Promise<void> {
    await this.source.start(this.reconciler);
  }

  onShutdown(hook: ShutdownHook): void {
    this.#shutdown.push(hook);
  }

  /**
   * The API's one path to change desired state: write the manifest (a file, or a commit in
   * git mode) with the caller recorded in an annotation, then reconcile that file now.
   */
  submit(relPath: string, manifest: Manifest, opts: WriteOptions): Promise<Outcome> {
    return this.#track(() => this.#submit(relPath, manifest, opts));
  }

  async #submit(relPath: string, manifest: Manifest, opts: WriteOptions): Promise<Outcome> {
    const withActor: Manifest = {
      ...manifest,
      metadata: { ...manifest.metadata, annotations: { ...manifest.metadata.annotations, [ACTOR_ANNOTATION]: opts.actor.userId } },
    };
    const text = stringify(withActor, { aliasDuplicateObjects: false });
    await this.writer.write(relPath, text, opts);
    // Reconcile what was written without reading and parsing it back (a clone: validation fills in defaults).
    const outcome = await this.reconciler.reconcilePath(
      relPath,
      { authors: new Map([[relPath, opts.actor.userId]]) },
      { bytes: Buffer.from(text), document: structuredClone(withActor) },
    );
    if (!outcome) throw new Error(`${relPath} was written but not reconciled`);
    return outcome;
  }

  /** Removes a manifest the API wrote (a failed onboarding) and reconciles the removal. */
  withdraw(relPath: string, opts: WriteOptions): Promise<void> {
    return this.#track(async () => {
      await this.writer.remove(relPath, opts);
      await this.reconciler.reconcilePath(relPath);
    });
  }

  #track<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#stopped) return Promise.reject(new UnavailableError('the controller is shutting down'));
    const p = fn();
    this.#inFlight.add(p);
    const done = () => this.#inFlight.delete(p);
    p.then(done, done);
    return p;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    await this.source.stop();
    await Promise.allSettled([...this.#inFlight]);
    this.reconciler.stop();
    await this.reconciler.idle();
    for (const hook of this.#shutdown.reverse()) {
      try {
        await hook();
      } catch (err) {
        this.log.error({ err: (err as Error).message }, 'shutdown hook failed');
      }
    }
    this.db.close();
  }
}
