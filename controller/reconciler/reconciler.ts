import { EventEmitter } from 'node:events';
import { boundMessage, formatProblem, StepError } from '../errors.ts';
import { realScheduler, systemClock, type Scheduler } from '../clock.ts';
import { isInputPath, isManifestPath, parseManifest } from '../manifest/loader.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import { IdAllocator } from '../store/ids.ts';
import type { Store } from '../store/db.ts';
import type { Applier, Clock, Manifest, Problem, ResourceRefs } from '../types.ts';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from '../lib/backoff.ts';
import { DesiredState, INVALID_PREFIX, type KnownRow, type ScanMeta } from './desired.ts';
import { massPruneRefusal, PRUNE_WINDOW_MS, pruneOrder, RemovalWindow } from './prune-guard.ts';
import { WorkQueue } from './queue.ts';
import { Recorder, resultOf, type RecorderOptions } from './record.ts';
import { KeyReconciler, type KeyOutcome } from './reconcile-key.ts';
import { specHash } from './spec-hash.ts';
import { TimeSlice } from '../lib/time-slice.ts';
import { WarningStore } from './warnings.ts';
import { isLive, StatusStore, type StatusFilter, type StatusRecord } from './status.ts';
import {
  emptyReport,
  type PlanEntry,
  type PruneBlocked,
  type ReconcileEvent,
  type ReconcileResult,
  type SourceBatch,
  type SourceFile,
  type SourceSink,
  type SyncReport,
  type ExpandRequest,
  type Generator,
} from './types.ts';

export interface ReconcilerOptions {
  db: Store;
  schemas: SchemaRegistry;
  appliers: Applier[];
  /** Reads one file again from the source (a manifest not kept in memory since its scan). */
  read(path: string): SourceFile | null;
  clock?: Clock;
  scheduler?: Scheduler;
  random?: () => number;
  backoff?: BackoffPolicy;
  /** A sync that would prune more than this share of the live objects is refused. */
  massPruneRatio?: number;
  /** Removals within this long count together for the mass-prune guard (default 10 s). */
  pruneWindowMs?: number;
  concurrency?: number;
  /** Kinds whose manifests stand for many generated objects (ClientSet). */
  generators?: Generator[];
  /** Told of every recorded result, in its transaction (the audit log of applied desired state). */
  observeRecord?: RecorderOptions['observe'];
}

/** Facts of an API write being reconciled: the revision it made and who asked. */
export interface WriteMeta {
  revision?: string;
  author?: string;
  /** The API key the write came with (audit actor `key`). */
  keyId?: string;
}

/** Scans of more files than this re-parse each one when it is applied instead of holding it. */
const KEEP_PARSED_UP_TO = 1000;
/** Work between two turns of the event loop during a sync (HTTP keeps answering: `/healthz` p99 < 50 ms). */
const SLICE_MS = 8;
/**
 * Keys applied in one store transaction during a sync at most (one commit instead of two per
 * key); a chunk also ends when its slice of time is used up, and the event loop gets a turn.
 */
const APPLY_CHUNK = 16;

interface Events {
  event: [ReconcileEvent];
  ready: [SyncReport];
}

/**
 * The reconcile loop: turns the batches sources deliver into desired state per key, reconciles
 * each key on a work queue (KeyReconciler), records every result in one place (Recorder) and
 * prunes what disappeared behind the mass-prune guard. Never reads the disk and knows no kind.
 */
export class Reconciler extends EventEmitter<Events> implements SourceSink {
  readonly status: StatusStore;
  /** Unknown fields of each manifest file as last scanned (shown with its status). */
  readonly warnings: WarningStore;
  /** Paths that have a warnings row: a scan of a clean file writes nothing unless it had one. */
  readonly #warned: Set<string>;
  readonly #appliers = new Map<string, Applier>();
  readonly #schemas: SchemaRegistry;
  readonly #db: Store;
  readonly #read: (path: string) => SourceFile | null;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #massPruneRatio: number;
  readonly #pruneWindowMs: number;
  readonly #scheduler: Scheduler;
  /** The removals of the last PRUNE_WINDOW_MS, counted together by the mass-prune guard. */
  #window: RemovalWindow | undefined;
  /** The held removals of the last closed window being pruned. */
  #windowPrune: Promise<void> = Promise.resolve();
  readonly #desired: DesiredState;
  readonly #recorder: Recorder;
  readonly #keys: KeyReconciler;
  readonly #queue: WorkQueue<string, ReconcileResult>;
  /** Keys started by the queue in this turn of the event loop, run together at its end. */
  readonly #group: { key: string; resolve(result: ReconcileResult): void }[] = [];
  /** Consecutive runs of a key that threw before anything could be recorded (the store failed). */
  readonly #storeFailures = new Map<string, number>();
  #ready = false;
  readonly #generators = new Map<string, Generator>();
  /** Per set key, the generated keys it has desired now. */
  readonly #generatedOf = new Map<string, Set<string>>();
  /** Generated keys their set dropped: the only generated keys a reconcile may prune. */
  readonly #generatedPrunes = new Set<string>();
  /** Sets to render again once the current work settles (a generated key changed phase outside a sync). */
  readonly #setsToSettle = new Set<string>();
  /** Whether a settle pass is queued or running (one at a time). */
  #settling = false;
  #batches = 0;

  constructor(opts: ReconcilerOptions) {
    super();
    for (const a of opts.appliers) this.#appliers.set(a.kind, a);
    for (const g of opts.generators ?? []) this.#generators.set(g.kind, g);
    this.#db = opts.db;
    this.#schemas = opts.schemas;
    this.#read = opts.read;
    this.#clock = opts.clock ?? systemClock;
    this.#random = opts.random ?? Math.random;
    this.#backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.#massPruneRatio = opts.massPruneRatio ?? 0.5;
    this.#pruneWindowMs = opts.pruneWindowMs ?? PRUNE_WINDOW_MS;
    this.#scheduler = opts.scheduler ?? realScheduler;
    this.status = new StatusStore(opts.db);
    this.warnings = new WarningStore(opts.db);
    this.#warned = new Set(this.warnings.all().keys());
    this.#desired = new DesiredState({ schemas: opts.schemas, exists: (p) => this.#read(p) !== null });
    this.#recorder = new Recorder({ status: this.status, clock: this.#clock, emit: (e) => this.emit('event', e), observe: opts.observeRecord });
    this.#keys = new KeyReconciler({
      db: opts.db,
      ids: new IdAllocator({ db: opts.db, clock: this.#clock }),
      appliers: this.#appliers,
      clock: this.#clock,
      random: this.#random,
      backoff: this.#backoff,
      onStep: (key, kind, name, step) => this.#recorder.step(key, kind, name, step),
    });
    this.#queue = new WorkQueue<string, ReconcileResult>({
      process: (key) => this.#process(key),
      concurrency: opts.concurrency ?? 4,
      scheduler: this.#scheduler,
    });
    // A generated object that changes phase outside a sync (a retry, a backoff) may move its set's rollout on.
    this.on('event', (e) => {
      if (e.type !== 'phase' || this.#batches > 0) return;
      const set = this.#setOf(e.key);
      if (set) this.#settleLater(set);
    });
  }

  /** The kinds an applier is registered for, in apply order. */
  get kinds(): string[] {
    return applierKinds([...this.#appliers.values()]);
  }

  /** The work queue's load: keys waiting, keys running, and how long the oldest run has been going. */
  get queueStats(): { depth: number; running: number; longestRunningMs: number } {
    return { depth: this.#queue.depth, running: this.#queue.running, longestRunningMs: this.#queue.longestRunningMs };
  }

  /** True once the first full sync has finished. */
  get ready(): boolean {
    return this.#ready;
  }

  /** The prune the guard refused and that still stands (read from the status rows). */
  get pruneBlocked(): PruneBlocked | undefined {
    const rows = this.status.byReason('prune-blocked');
    if (rows.length === 0) return undefined;
    const at = rows.map((r) => r.updatedAt).sort().at(-1) as string;
    return { keys: rows.map((r) => r.key), live: this.status.countLive(), at };
  }

  /** The file that defines `key`, when a file (not a ClientSet) does. */
  fileOf(key: string): string | undefined {
    return this.#desired.fileOf(key);
  }

  /** The manifest a ClientSet generated for `key` as desired now (generated objects have no file to read). */
  generatedManifest(key: string): Manifest | undefined {
    return this.#desired.get(key)?.generatedBy ? this.#desired.manifestOf(key) : undefined;
  }

  listStatus(filter?: StatusFilter): StatusRecord[] {
    return this.status.list(filter);
  }

  /** A batch from a source: every file (full: what is absent is pruned) or what changed (delta). */
  async apply(batch: SourceBatch): Promise<SyncReport> {
    const report = emptyReport();
    const full = batch.type === 'full';
    const index = full ? this.status.index() : undefined;
    const present = new Set<string>();
    const keys: string[] = [];
    const inputsChanged = new Set<string>();
    const slice = new TimeSlice(SLICE_MS);
    this.#batches++;
    try {
    for await (const file of batch.files) {
      if (!full && isInputPath(file.path)) inputsChanged.add(file.path);
      if (!isManifestPath(file.path) || present.has(file.path)) continue;
      present.add(file.path);
      await slice.tick();
      const known = index ? (index.get(file.path) ?? []) : this.status.byPath(file.path);
      const meta = { revision: batch.revision, author: batch.authors?.get(file.path) };
      const key = this.#scan(file, known, meta, report, { keepParsed: keys.length < KEEP_PARSED_UP_TO });
      if (key) keys.push(key);
    }
    report.scanned = present.size;
    const gone = full ? [...(index?.keys() ?? [])].filter((p) => !present.has(p)) : (batch.removed ?? []).filter(isManifestPath);
    const pruneKeys = gone.flatMap((p) => this.#forget(p));
    for (const p of batch.removed ?? []) if (isInputPath(p)) inputsChanged.add(p);
    const allowMassPrune = batch.allowMassPrune === true;
    let sets = this.#setsOf(full, [...keys, ...pruneKeys, ...report.invalid], inputsChanged);
    for (let round = 0; sets.length > 0 && round < 100; round++) {
      const generated = this.#expandSets(sets, allowMassPrune);
      const applying = new Set([...keys, ...generated.apply]);
      await this.#applyInOrder([...applying], report, slice);
      pruneKeys.push(...generated.prune);
      keys.length = 0;
      // Applied objects may let a rollout move on to its next tenants or wave.
      sets = generated.apply.length > 0 ? sets.filter((k) => this.#desired.get(k) !== undefined || this.#generatedOf.has(k)) : [];
    }
    if (keys.length) await this.#applyInOrder(keys, report, slice);
    if (full) {
      await this.#prune(pruneKeys, allowMassPrune, report, slice);
      // A full sync counted every removal there is: the window's held removals were pruned or refused with it.
      this.#closeWindow();
    } else if (batch.trickle) this.#hold(pruneKeys, report);
    else await this.#pruneInWindow(pruneKeys, allowMassPrune, report, slice);
    if (full) {
      // A full sync sees the whole picture: a refusal it did not repeat no longer stands.
      const blocked = new Set(report.pruneBlocked?.keys ?? []);
      for (const row of this.status.byReason('prune-blocked')) if (!blocked.has(row.key)) this.#recorder.releasePruneBlock(row);
      if (!this.#ready) {
        this.#ready = true;
        this.emit('ready', report);
      }
    }
    return report;
    } finally {
      this.#batches--;
    }
  }

  /** The set keys a batch touches: on a full sync every set, else those scanned, removed or whose input files changed. */
  #setsOf(full: boolean, touched: string[], inputsChanged: Set<string>): string[] {
    if (this.#generators.size === 0) return [];
    const out = new Set<string>();
    for (const key of touched) if (this.#generators.has(kindOf(key)) && !key.includes('#')) out.add(key);
    for (const g of this.#generators.values()) {
      for (const name of g.known()) {
        const key = `${g.kind}/${name}`;
        if (full || g.inputPaths(name).some((p) => inputsChanged.has(p))) out.add(key);
      }
    }
    if (full) for (const key of this.#generatedOf.keys()) out.add(key);
    return [...out].sort();
  }

  /** The set a generated key belongs to, if any. */
  #setOf(key: string): string | undefined {
    const d = this.#desired.get(key);
    if (d?.generatedBy) return d.generatedBy;
    return undefined;
  }

  /**
   * Asks each set's generator what it wants desired now, and turns the answer into desired state:
   * the keys to apply (new or changed), the keys to prune (dropped by the set), and the status rows
   * of its invalid inputs. A file's object is never replaced by a generated one.
   */
  #expandSets(setKeys: string[], allowMassPrune: boolean): { apply: string[]; prune: string[] } {
    const apply: string[] = [];
    const prune: string[] = [];
    for (const setKey of setKeys) {
      const gen = this.#generators.get(kindOf(setKey));
      if (!gen) continue;
      const name = setKey.slice(setKey.indexOf('/') + 1);
      const row = this.status.get(setKey);
      const desired = this.#desired.get(setKey);
      let manifest = desired ? this.#desired.manifestOf(setKey) : undefined;
      if (desired && !manifest) {
        const r = this.#desired.reparse(setKey, this.#read(desired.path));
        manifest = r.ok ? r.manifest : undefined;
      }
      const state: ExpandRequest['state'] = manifest ? 'present' : row && row.phase === 'Invalid' ? 'invalid' : desired ? 'invalid' : 'removed';
      const path = desired?.path ?? row?.path ?? null;
      const exp = gen.expand({
        name,
        manifest,
        path,
        state,
        allowMassPrune,
        fileOf: (key) => this.#desired.fileOf(key),
        phaseOf: (key) => this.status.get(key)?.phase,
        read: (p) => this.#read(p),
      });
      const before = this.#generatedOf.get(setKey) ?? new Set<string>();
      const now = new Set<string>();
      for (const obj of exp.objects) {
        if (this.#desired.fileOf(obj.key) !== undefined) continue;
        const hash = specHash(obj.manifest);
        now.add(obj.key);
        this.#generatedPrunes.delete(obj.key);
        this.#desired.setGenerated(obj.key, { path: path ?? setKey, hash, manifest: obj.manifest, generatedBy: setKey, inputId: obj.inputId });
        const r = this.status.get(obj.key);
        if (!r || r.phase !== 'Synced' || r.specHash !== hash || r.generatedBy !== setKey) apply.push(obj.key);
      }
      for (const key of before) {
        if (now.has(key) || this.#desired.fileOf(key) !== undefined) continue;
        this.#desired.delete(key);
        this.#generatedPrunes.add(key);
        prune.push(key);
      }
      this.#generatedOf.set(setKey, now);
      const invalid = new Set<string>();
      for (const inv of exp.invalidInputs) {
        const key = `${setKey}#${inv.inputId}`;
        invalid.add(key);
        const prev = this.status.get(key);
        if (prev && prev.phase === 'Invalid' && prev.message === inv.message) continue;
        this.#recorder.record(
          { key, kind: gen.kind, name: `${name}#${inv.inputId}`, phase: 'Invalid', reason: inv.reason, message: boundMessage(inv.message), resourceIds: {}, retryAfterMs: null },
          { path, generatedBy: setKey, inputId: inv.inputId },
        );
      }
      for (const r of this.status.generatedBy(setKey)) if (r.key.startsWith(`${setKey}#`) && !invalid.has(r.key)) this.#recorder.forget(r.key);
      if (exp.paused) this.#recorder.emit({ type: 'rollout-paused', key: setKey, kind: gen.kind, name, message: exp.paused, at: this.#clock().toISOString() });
    }
    return { apply, prune };
  }

  /** Renders `setKey` again and reconciles what changed (approve, a rollout moving on after a retry). */
  async expandSet(setKey: string, opts: { allowMassPrune?: boolean } = {}): Promise<SyncReport> {
    const report = emptyReport();
    const slice = new TimeSlice(SLICE_MS);
    this.#batches++;
    try {
      for (let round = 0; round < 100; round++) {
        const generated = this.#expandSets([setKey], opts.allowMassPrune === true);
        await this.#applyInOrder(generated.apply, report, slice);
        await this.#prune(generated.prune, true, report, slice);
        if (generated.apply.length === 0 && generated.prune.length === 0) break;
      }
    } finally {
      this.#batches--;
    }
    return report;
  }

  #settleLater(setKey: string): void {
    this.#setsToSettle.add(setKey);
    if (this.#settling) return;
    this.#settling = true;
    void Promise.resolve().then(async () => {
      try {
        while (this.#setsToSettle.size > 0) {
          const [next] = this.#setsToSettle;
          this.#setsToSettle.delete(next);
          await this.expandSet(next);
        }
      } finally {
        this.#settling = false;
      }
    });
  }

  /**
   * Reconciles one file now and answers with its result (the API's path: write the file, then
   * call this). `document` is its already parsed content, so it is not parsed again.
   */
  /**
   * A step of a write that runs before the reconcile (e.g. `write manifest` by the API's submit
   * path): an event like the appliers' own steps, so a page following the stream sees the
   * write start before its answer.
   */
  announce(key: string, kind: string, name: string, step: string): void {
    this.#recorder.step(key, kind, name, step);
  }

  async reconcileFile(file: SourceFile, meta: WriteMeta = {}, document?: unknown): Promise<ReconcileResult> {
    const report = emptyReport();
    const known = this.status.byPath(file.path);
    const key = this.#scan(file, known, meta, report, { document });
    if (key) return (await this.#queue.add(key)) ?? stoppedResult(key);
    const row = this.status.get(known.find((r) => !r.key.startsWith(INVALID_PREFIX))?.key ?? INVALID_PREFIX + file.path);
    if (!row) throw new Error(`${file.path} was scanned but left no status`);
    return resultOf(row);
  }

  /**
   * Retry now (the console's Retry): reconciles the file that defines `key` as it is at the
   * source, without waiting for the backoff. Undefined when no row or no file defines the key.
   */
  async retry(key: string): Promise<ReconcileResult | undefined> {
    const row = this.status.get(key);
    if (row?.generatedBy && this.#desired.get(key)?.generatedBy) return (await this.#queue.add(key)) ?? stoppedResult(key);
    const file = row?.path ? this.#read(row.path) : null;
    if (!row || !file) return undefined;
    return this.reconcileFile(file, { revision: row.lastAttemptedRevision ?? undefined });
  }

  /** The file at `path` was removed (an API write withdrawn): prunes what it defined, now. */
  async reconcileRemoved(path: string): Promise<ReconcileResult | null> {
    const keys = this.#forget(path);
    const results: ReconcileResult[] = [];
    for (const row of this.#pruneCandidates(keys)) results.push((await this.#queue.add(row.key)) ?? stoppedResult(row.key));
    return results[0] ?? null;
  }

  /** What a full sync of `batch` would do, changing nothing. */
  async plan(batch: SourceBatch): Promise<PlanEntry[]> {
    const out: PlanEntry[] = [];
    const present = new Set<string>();
    for await (const file of batch.files) {
      if (!isManifestPath(file.path)) continue;
      present.add(file.path);
      if ('unreadable' in file) {
        out.push({ key: INVALID_PREFIX + file.path, path: file.path, action: 'invalid', problems: [{ path: '', message: file.unreadable }] });
        continue;
      }
      const r = parseManifest(file.path, file.bytes, this.#schemas);
      if (!r.ok) {
        out.push({ key: INVALID_PREFIX + file.path, path: file.path, action: 'invalid', problems: r.problems });
        continue;
      }
      const row = this.status.get(r.key);
      const action = !row || !isLive(row) ? 'create' : row.specHash === specHash(r.manifest) ? 'unchanged' : 'update';
      out.push({ key: r.key, path: file.path, action });
    }
    for (const row of this.status.list()) {
      if (row.generatedBy) continue;
      if (isLive(row) && (row.path === null || !present.has(row.path))) out.push({ key: row.key, path: row.path, action: 'prune' });
    }
    return out;
  }

  /**
   * The one dry run: applies `objects` (in apply order) through their appliers' real checks and
   * apply, inside ONE store transaction that always rolls back. Nothing is written, no event is
   * sent. Per key: applied (with the IDs the apply gave, `(new)` ones rolled back), or the step and
   * reason it would fail with. `actor`: whom the apply is recorded for (nothing is kept).
   */
  dryRun(objects: { key: string; manifest: Manifest }[], opts: { actor?: string } = {}): Map<string, DryRunResult> {
    const out = new Map<string, DryRunResult>();
    const ids = new IdAllocator({ db: this.#db, clock: this.#clock });
    const now = this.#clock();
    const ordered = [...objects].sort((a, b) => (this.#appliers.get(a.manifest.kind)?.order ?? 99) - (this.#appliers.get(b.manifest.kind)?.order ?? 99));
    try {
      this.#db.transaction(() => {
        for (const { key, manifest } of ordered) {
          const applier = this.#appliers.get(manifest.kind);
          try {
            if (!applier) throw new StepError('apply', `no applier for kind ${manifest.kind}`);
            const problems = applier.lint?.(manifest) ?? [];
            if (problems.length === 0) problems.push(...(applier.check?.(this.#db, manifest) ?? []));
            if (problems.length) throw new StepError('validate', problems.map(formatProblem).join('; '));
            const row = this.status.get(key);
            const previous = row && isLive(row) ? row.resourceIds : undefined;
            const resourceIds = this.#db.transaction(() => applier.apply({ db: this.#db, ids, now, key, manifest, previous, actor: opts.actor ?? 'preview', step: () => {} }))();
            out.set(key, { ok: true, resourceIds });
          } catch (err) {
            out.set(key, dryRunFailure(err));
          }
        }
        throw DRY_RUN_ROLLBACK;
      })();
    } catch (err) {
      if (err !== DRY_RUN_ROLLBACK) throw err;
    }
    return out;
  }

  /** Waits until no reconcile is queued or running. */
  async idle(): Promise<void> {
    await this.#windowPrune;
    await this.#queue.idle();
  }

  stop(): void {
    this.#closeWindow();
    this.#queue.stop();
  }

  /** One delivered file → the key to reconcile, or undefined (unchanged, invalid). */
  #scan(file: SourceFile, known: KnownRow[], meta: ScanMeta, report: SyncReport, opts: { document?: unknown; keepParsed?: boolean }): string | undefined {
    const s = this.#desired.scan(file, known, meta, opts);
    switch (s.type) {
      case 'unchanged': {
        report.skipped++;
        if (s.row.reason === 'prune-blocked') {
          const row = this.status.get(s.key);
          if (row) this.#recorder.releasePruneBlock(row);
        }
        return undefined;
      }
      case 'invalid': {
        this.#setWarnings(s.path, []);
        const prev = this.status.get(s.key);
        // The last good state stays: resources and spec hash are left as they are.
        this.#recorder.record(
          {
            key: s.key,
            kind: prev?.kind || s.kind,
            name: prev?.name ?? s.name,
            phase: 'Invalid',
            reason: s.reason,
            message: boundMessage(s.problems.map(formatProblem).join('; ')),
            resourceIds: prev?.resourceIds ?? {},
            retryAfterMs: null,
          },
          { path: s.path, hash: s.hash },
        );
        report.invalid.push(s.key);
        return undefined;
      }
      case 'reconcile':
        if (s.displaced) {
          this.#generatedOf.get(s.displaced)?.delete(s.key);
          if (this.#batches === 0) this.#settleLater(s.displaced);
        }
        this.#setWarnings(file.path, s.warnings);
        if (s.superseded) void this.#queue.add(s.superseded);
        if (s.staleInvalidRow) this.#recorder.forget(s.staleInvalidRow);
        return s.key;
    }
  }

  #setWarnings(path: string, warnings: Problem[]): void {
    if (warnings.length === 0 && !this.#warned.has(path)) return;
    this.warnings.set(path, warnings);
    if (warnings.length) this.#warned.add(path);
    else this.#warned.delete(path);
  }

  /** The file at `path` is gone: the keys it defined, to be pruned. */
  #forget(path: string): string[] {
    this.#setWarnings(path, []);
    const { prune, invalidRows } = this.#desired.forget(path, this.status.byPath(path));
    invalidRows.forEach((k) => this.#recorder.forget(k));
    return prune;
  }

  /** Applies `keys` kind by kind (apply order), a chunk at a time with turns of the event loop between. */
  async #applyInOrder(keys: string[], report: SyncReport, slice: TimeSlice): Promise<void> {
    const groups = new Map<number, string[]>();
    for (const key of keys) {
      const order = this.#appliers.get(kindOf(key))?.order ?? 99;
      const group = groups.get(order);
      if (group) group.push(key);
      else groups.set(order, [key]);
    }
    for (const order of [...groups.keys()].sort((a, b) => a - b)) {
      const group = groups.get(order) ?? [];
      for (let i = 0; i < group.length; ) {
        const chunk = this.#applyChunk(group, i);
        i = chunk.next;
        const results = await chunk.results;
        for (const r of results) {
          if (r?.phase === 'Synced') report.applied.push(r.key);
          else if (r?.phase === 'Failed') report.failed.push(r.key);
          else if (r?.phase === 'Invalid') report.invalid.push(r.key);
        }
        await slice.tick();
      }
    }
  }

  /**
   * Reconciles the next keys of a sync's `group` from `from`, as many as fit in a slice of time
   * (APPLY_CHUNK at most), and says where the next chunk starts. Keys the queue does not hold run
   * right here, synchronously, in ONE store transaction (each key's apply stays its own savepoint:
   * a failing key rolls back alone); nothing else runs meanwhile. Keys the queue holds (an API
   * write of the same object) wait for it. If the chunk's transaction fails as a whole, each of
   * its keys goes through the queue.
   */
  #applyChunk(group: string[], from: number): { next: number; results: Promise<(ReconcileResult | undefined)[]> } {
    const started = performance.now();
    let next = from;
    let done = new Map<string, ReconcileResult>();
    try {
      this.#db.transaction(() => {
        while (next < group.length && next - from < APPLY_CHUNK && (next === from || performance.now() - started < SLICE_MS)) {
          const key = group[next++];
          if (!this.#queue.holds(key)) done.set(key, this.#runKey(key));
        }
      })();
      for (const [k, r] of done) this.#queue.ranOutside(k, r);
    } catch {
      done = new Map();
    }
    const keys = group.slice(from, next);
    return { next, results: Promise.all(keys.map((k) => done.get(k) ?? this.#queue.add(k))) };
  }

  /** Live rows of `keys`; rows of keys that never owned anything are dropped. */
  #pruneCandidates(keys: string[]): StatusRecord[] {
    const out: StatusRecord[] = [];
    for (const key of keys) {
      const row = this.status.get(key);
      if (row && isLive(row)) out.push(row);
      else if (row) {
        this.#queue.cancelRetry(key);
        this.#recorder.forget(key);
      }
    }
    return out;
  }

  async #prune(keys: string[], allowMassPrune: boolean, report: SyncReport, slice: TimeSlice): Promise<void> {
    const candidates = this.#pruneCandidates(keys);
    if (candidates.length === 0) return;
    const live = this.status.countLive();
    const refusal = allowMassPrune ? undefined : massPruneRefusal(candidates.length, live, this.#massPruneRatio);
    if (refusal) return this.#block(candidates, refusal, live, report);
    await this.#pruneNow(candidates, report, slice);
  }

  #block(candidates: StatusRecord[], refusal: string, live: number, report: SyncReport): void {
    for (const c of candidates) this.#recorder.pruneBlocked(c, refusal);
    report.pruneBlocked = { keys: candidates.map((c) => c.key), live, at: this.#clock().toISOString() };
  }

  /** The removal window now, opened (against the objects live now) when none is. */
  #openWindow(): RemovalWindow {
    if (this.#window) return this.#window;
    let cancel = () => {};
    const w = new RemovalWindow(this.status.countLive(), () => cancel());
    cancel = this.#scheduler(() => this.#windowClosed(w), this.#pruneWindowMs);
    this.#window = w;
    return w;
  }

  #closeWindow(): void {
    this.#window?.cancel();
    this.#window = undefined;
  }

  /**
   * Removals from a source that may deliver one change in several batches (a folder watcher):
   * held until the window closes; refused together (every held one) once the window's removals
   * exceed the guard's share of the objects.
   */
  #hold(keys: string[], report: SyncReport): void {
    const candidates = this.#pruneCandidates(keys);
    if (candidates.length === 0) return;
    const w = this.#openWindow();
    for (const c of candidates) w.held.add(c.key);
    const refusal = w.refusal(0, this.#massPruneRatio);
    if (!refusal) return;
    w.blocked = true;
    const held = [...w.held].map((k) => this.status.get(k)).filter((r): r is StatusRecord => r !== undefined && isLive(r));
    this.#block(held, refusal, w.base, report);
  }

  /** Removals delivered whole (a git commit range): pruned now unless the window's removals, these included, are too many. */
  async #pruneInWindow(keys: string[], allowMassPrune: boolean, report: SyncReport, slice: TimeSlice): Promise<void> {
    const candidates = this.#pruneCandidates(keys);
    if (candidates.length === 0) return;
    const w = this.#openWindow();
    const refusal = allowMassPrune ? undefined : w.refusal(candidates.length, this.#massPruneRatio);
    if (refusal) {
      w.blocked = true;
      return this.#block(candidates, refusal, w.base, report);
    }
    w.pruned += candidates.length;
    await this.#pruneNow(candidates, report, slice);
  }

  /** The window is over: its held removals go, unless it was refused or their files came back. */
  #windowClosed(w: RemovalWindow): void {
    if (this.#window !== w) return;
    this.#window = undefined;
    if (w.blocked) return;
    const keys = [...w.held].filter((k) => this.#desired.get(k) === undefined);
    if (keys.length === 0) return;
    this.#windowPrune = this.#prune(keys, true, emptyReport(), new TimeSlice(SLICE_MS)).catch(() => {
      /* each key's failure is recorded on its status row */
    });
  }

  async #pruneNow(candidates: StatusRecord[], report: SyncReport, slice: TimeSlice): Promise<void> {
    for (const c of pruneOrder(candidates, this.#appliers)) {
      const r = await this.#queue.add(c.key);
      if (r?.phase === 'Pruned') report.pruned.push(c.key);
      else report.failed.push(c.key);
      await slice.tick();
    }
  }

  /**
   * One run of one key on the queue: it joins the group of the keys the queue starts in this turn
   * of the event loop (the API writes whose files became durable together), run at the turn's end
   * in ONE store transaction (`#flushGroup`).
   */
  #process(key: string): Promise<ReconcileResult> {
    return new Promise((resolve) => {
      if (this.#group.push({ key, resolve }) === 1) setImmediate(() => this.#flushGroup());
    });
  }

  /**
   * Group commit of the store work: the group's keys run one after the other in one transaction,
   * each its own savepoint (a key whose store work fails rolls back alone and answers its own
   * failure); one commit (WAL frames of the shared pages, the commit record) instead of one per
   * key. No event goes out and no caller is answered before the commit. If the transaction fails
   * as a whole (its commit, or the store rolled it back under a key), each key runs again alone.
   */
  #flushGroup(): void {
    const group = this.#group.splice(0);
    if (group.length === 1) return group[0].resolve(this.#runKey(group[0].key));
    let runs: KeyRun[];
    try {
      runs = this.#db.transaction(() =>
        group.map(({ key }) => {
          if (!this.#db.inTransaction) throw GROUP_LOST;
          return this.#attempt(key);
        }),
      )();
    } catch {
      for (const { key, resolve } of group) resolve(this.#runKey(key));
      return;
    }
    group.forEach(({ key, resolve }, i) => resolve(this.#settle(key, runs[i])));
  }

  /** One run of one key: decide, reconcile, record. Never throws. */
  #runKey(key: string): ReconcileResult {
    return this.#settle(key, this.#attempt(key));
  }

  /**
   * The store work of one run: the apply (a savepoint inside) and the status row it produced
   * commit together — never resources without their status. Inside a group's transaction this
   * is a savepoint of it.
   */
  #attempt(key: string): KeyRun {
    const started = performance.now();
    try {
      const done = this.#db.transaction(() => {
        const outcome = this.#reconcile(key);
        return outcome && { result: outcome.result, ...this.#recorder.write(outcome.result, { ...outcome.facts, durationMs: performance.now() - started }) };
      })();
      return { done };
    } catch (err) {
      return { error: err as Error };
    }
  }

  /** The result of a run once its store work has committed (or failed): the event goes out now. */
  #settle(key: string, run: KeyRun): ReconcileResult {
    if ('error' in run) {
      // The store itself failed (locked, full, read-only): not even the failure could be recorded.
      const attempts = (this.#storeFailures.get(key) ?? 0) + 1;
      this.#storeFailures.set(key, attempts);
      const retryAfterMs = backoffDelay(attempts, this.#backoff, this.#random);
      const message = `${key} could not be applied yet (${run.error.message}); it is retried`;
      return { key, kind: kindOf(key), name: key.slice(key.indexOf('/') + 1), phase: 'Failed', reason: 'store', message, resourceIds: {}, retryAfterMs };
    }
    this.#storeFailures.delete(key);
    const { done } = run;
    if (!done) {
      const row = this.status.get(key);
      return row ? resultOf(row) : stoppedResult(key);
    }
    if (done.event) this.#recorder.emit(done.event);
    return done.result;
  }

  #reconcile(key: string): KeyOutcome | undefined {
    const desired = this.#desired.get(key);
    const row = this.status.get(key);
    if (!desired) {
      // A generated object is pruned only when its set dropped it (never because its set was not rendered yet).
      if (row?.generatedBy && !this.#generatedPrunes.has(key)) return undefined;
      this.#generatedPrunes.delete(key);
      return row && isLive(row) ? this.#keys.prune(row) : undefined;
    }
    let manifest = this.#desired.manifestOf(key);
    if (!manifest) {
      const r = this.#desired.reparse(key, this.#read(desired.path));
      if (!r.ok) {
        // Changed since its scan (now invalid, or another object): scanned again as it is now;
        // gone: the source delivers the removal.
        if (r.file) this.#scan(r.file, this.status.byPath(desired.path), {}, emptyReport(), {});
        return undefined;
      }
      manifest = r.manifest;
    }
    const hash = specHash(manifest);
    if (row && row.phase === 'Synced' && row.specHash === hash) return this.#keys.unchanged(row, desired);
    const outcome = this.#keys.apply(key, manifest, desired, row, hash);
    // Applied: the parsed manifest is not kept (10,000 of them would be); it is read again when needed.
    if (outcome.result.phase === 'Synced') this.#desired.release(key);
    return outcome;
  }
}

/** The kinds of `appliers`, in apply order. */
export function applierKinds(appliers: readonly Applier[]): string[] {
  return [...appliers].sort((a, b) => a.order - b.order).map((a) => a.kind);
}

/** What the store work of one run left: what it recorded (undefined: nothing to do), or the store's error. */
type KeyRun = { done: { result: ReconcileResult; event?: ReconcileEvent } | undefined } | { error: Error };

/** Thrown when the store rolled a group's transaction back under one of its keys: the group runs again key by key. */
const GROUP_LOST = new Error('the group transaction was rolled back');

/** Thrown to end a dry run's transaction: it always rolls back. */
const DRY_RUN_ROLLBACK = new Error('dry run');

/**
 * What the dry run found for one object: applied, with the IDs the apply gave; or refused at
 * `step` for `reason`, and `message` the one text of that refusal (`<step>: <reason>`, as a
 * StepError reads) that every dry run answers.
 */
export type DryRunResult = { ok: true; resourceIds: ResourceRefs } | DryRunFailure;
export interface DryRunFailure {
  ok: false;
  step: string;
  reason: string;
  message: string;
}

/** An error of a dry run's apply as its failure: a StepError's step, any other error is the `apply` step's. */
function dryRunFailure(err: unknown): DryRunFailure {
  const error = err instanceof StepError ? err : new StepError('apply', (err as Error).message);
  return { ok: false, step: error.step, reason: boundMessage(error.reason), message: boundMessage(error.message) };
}

function kindOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/** What a caller waiting on a key gets when the loop stopped before running it. */
function stoppedResult(key: string): ReconcileResult {
  return { key, kind: kindOf(key), name: key.slice(key.indexOf('/') + 1), phase: 'Pending', reason: 'stopped', message: 'the controller is shutting down', resourceIds: {}, retryAfterMs: null };
}
