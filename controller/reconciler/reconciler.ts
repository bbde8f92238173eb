import { EventEmitter } from 'node:events';
import { boundMessage, formatProblem } from '../errors.ts';
import { realScheduler, systemClock, type Scheduler } from '../clock.ts';
import { isManifestPath, parseManifest } from '../manifest/loader.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import { IdAllocator } from '../store/ids.ts';
import type { Store } from '../store/db.ts';
import type { Applier, Clock } from '../types.ts';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.ts';
import { DesiredState, INVALID_PREFIX, type KnownRow, type ScanMeta } from './desired.ts';
import { massPruneRefusal, pruneOrder } from './prune-guard.ts';
import { WorkQueue } from './queue.ts';
import { Recorder, resultOf, type RecorderOptions } from './record.ts';
import { KeyReconciler, type KeyOutcome } from './reconcile-key.ts';
import { specHash } from './spec-hash.ts';
import { TimeSlice } from './time-slice.ts';
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
  concurrency?: number;
  /** Told of every recorded result, in its transaction (the audit log of applied desired state). */
  observeRecord?: RecorderOptions['observe'];
}

/** Facts of an API write being reconciled: the revision it made and who asked. */
export interface WriteMeta {
  revision?: string;
  author?: string;
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
  readonly #appliers = new Map<string, Applier>();
  readonly #schemas: SchemaRegistry;
  readonly #db: Store;
  readonly #read: (path: string) => SourceFile | null;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #massPruneRatio: number;
  readonly #desired: DesiredState;
  readonly #recorder: Recorder;
  readonly #keys: KeyReconciler;
  readonly #queue: WorkQueue<string, ReconcileResult>;
  /** Consecutive runs of a key that threw before anything could be recorded (the store failed). */
  readonly #storeFailures = new Map<string, number>();
  #ready = false;

  constructor(opts: ReconcilerOptions) {
    super();
    for (const a of opts.appliers) this.#appliers.set(a.kind, a);
    this.#db = opts.db;
    this.#schemas = opts.schemas;
    this.#read = opts.read;
    this.#clock = opts.clock ?? systemClock;
    this.#random = opts.random ?? Math.random;
    this.#backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.#massPruneRatio = opts.massPruneRatio ?? 0.5;
    this.status = new StatusStore(opts.db);
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
      scheduler: opts.scheduler ?? realScheduler,
    });
  }

  /** The kinds an applier is registered for, in apply order. */
  get kinds(): string[] {
    return [...this.#appliers.values()].sort((a, b) => a.order - b.order).map((a) => a.kind);
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
    const slice = new TimeSlice(SLICE_MS);
    for await (const file of batch.files) {
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
    await this.#applyInOrder(keys, report, slice);
    await this.#prune(pruneKeys, batch.allowMassPrune === true, report, slice);
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
      if (isLive(row) && (row.path === null || !present.has(row.path))) out.push({ key: row.key, path: row.path, action: 'prune' });
    }
    return out;
  }

  /** Waits until no reconcile is queued or running. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  stop(): void {
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
        if (s.superseded) void this.#queue.add(s.superseded);
        if (s.staleInvalidRow) this.#recorder.forget(s.staleInvalidRow);
        return s.key;
    }
  }

  /** The file at `path` is gone: the keys it defined, to be pruned. */
  #forget(path: string): string[] {
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
    if (refusal) {
      for (const c of candidates) this.#recorder.pruneBlocked(c, refusal);
      report.pruneBlocked = { keys: candidates.map((c) => c.key), live, at: this.#clock().toISOString() };
      return;
    }
    for (const c of pruneOrder(candidates, this.#appliers)) {
      const r = await this.#queue.add(c.key);
      if (r?.phase === 'Pruned') report.pruned.push(c.key);
      else report.failed.push(c.key);
      await slice.tick();
    }
  }

  /** One run of one key on the queue. */
  async #process(key: string): Promise<ReconcileResult> {
    return this.#runKey(key);
  }

  /** One run of one key: decide, reconcile, record. Never throws. */
  #runKey(key: string): ReconcileResult {
    const started = performance.now();
    try {
      // The apply (a savepoint inside) and the status row it produced commit together: one commit
      // per key, and never resources without their status. The event goes out once committed.
      const done = this.#db.transaction(() => {
        const outcome = this.#reconcile(key);
        return outcome && { result: outcome.result, ...this.#recorder.write(outcome.result, { ...outcome.facts, durationMs: performance.now() - started }) };
      })();
      this.#storeFailures.delete(key);
      if (!done) {
        const row = this.status.get(key);
        return row ? resultOf(row) : stoppedResult(key);
      }
      if (done.event) this.#recorder.emit(done.event);
      return done.result;
    } catch (err) {
      // The store itself failed (locked, full, read-only): not even the failure could be recorded.
      const attempts = (this.#storeFailures.get(key) ?? 0) + 1;
      this.#storeFailures.set(key, attempts);
      const retryAfterMs = backoffDelay(attempts, this.#backoff, this.#random);
      const message = `${key} could not be applied yet (${(err as Error).message}); it is retried`;
      return { key, kind: kindOf(key), name: key.slice(key.indexOf('/') + 1), phase: 'Failed', reason: 'store', message, resourceIds: {}, retryAfterMs };
    }
  }

  #reconcile(key: string): KeyOutcome | undefined {
    const desired = this.#desired.get(key);
    const row = this.status.get(key);
    if (!desired) return row && isLive(row) ? this.#keys.prune(row) : undefined;
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

function kindOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

/** What a caller waiting on a key gets when the loop stopped before running it. */
function stoppedResult(key: string): ReconcileResult {
  return { key, kind: kindOf(key), name: key.slice(key.indexOf('/') + 1), phase: 'Pending', reason: 'stopped', message: 'the controller is shutting down', resourceIds: {}, retryAfterMs: null };
}
