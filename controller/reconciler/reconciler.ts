import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { boundMessage, formatProblem, StepError, UnavailableError } from '../errors.ts';
import { realScheduler, systemClock, type Scheduler } from '../clock.ts';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { checkDocument, isManifestPath, parseManifest, readManifestFile, readManifestFileSync, sha256, type LoadResult } from '../manifest/loader.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import { IdAllocator } from '../store/ids.ts';
import type { Store } from '../store/db.ts';
import {
  ACTOR_ANNOTATION,
  type Applier,
  type Clock,
  type Manifest,
  type Phase,
  type Problem,
  type ResourceRefs,
  type SourceMeta,
  type SourceSink,
} from '../types.ts';
import { backoffDelay, DEFAULT_BACKOFF, type BackoffPolicy } from './backoff.ts';
import { WorkQueue } from './queue.ts';
import { isLive, StatusStore, type StatusFilter, type StatusRecord } from './status.ts';

export interface ReconcilerOptions {
  db: Store;
  schemas: SchemaRegistry;
  appliers: Applier[];
  /** Directory holding the manifest files (the source's root). */
  root: string;
  clock?: Clock;
  scheduler?: Scheduler;
  random?: () => number;
  backoff?: BackoffPolicy;
  /** A sync that would prune more than this share of the live objects is refused. */
  massPruneRatio?: number;
  concurrency?: number;
}

/** What happened to one manifest key in a reconcile. */
export interface Outcome {
  key: string;
  phase: Phase;
  message: string;
  resourceIds: ResourceRefs;
  /** The failing step of a `Failed` apply. */
  step?: string;
}

export interface SyncReport {
  scanned: number;
  applied: string[];
  skipped: number;
  invalid: string[];
  pruned: string[];
  failed: string[];
  /** Set when the mass-prune guard refused a prune. */
  pruneBlocked?: PruneBlocked;
}

export interface PruneBlocked {
  keys: string[];
  live: number;
  at: string;
}

/**
 * A file the caller has just written: its bytes, and optionally the document they encode, so
 * the API's write is reconciled without reading and parsing its own output again.
 */
export interface WrittenFile {
  bytes: Buffer;
  document?: unknown;
}

export interface SyncOptions extends SourceMeta {
  allowMassPrune?: boolean;
}

/** Emitted on `event`: every phase change, every apply step (the UI's live progress). */
export interface ReconcileEvent {
  type: 'phase' | 'step' | 'prune-blocked';
  key: string;
  kind: string;
  name: string;
  phase?: Phase;
  step?: string;
  message?: string;
  at: string;
}

interface Desired {
  path: string;
  hash: string;
  /** Parsed lazily for files skipped as unchanged at start. */
  manifest?: Manifest;
  author?: string;
  revision?: string;
}

export interface PlanEntry {
  key: string;
  path: string | null;
  action: 'create' | 'update' | 'unchanged' | 'prune' | 'invalid';
  problems?: Problem[];
}

/** Hash of what an apply depends on: a file that only changes formatting applies nothing. */
export function specHash(m: Manifest): string {
  return sha256(canonicalJson({ apiVersion: m.apiVersion, kind: m.kind, name: m.metadata.name, spec: m.spec }));
}

export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

const INVALID_PREFIX = 'File/';
/** Scans of more files than this re-parse each one when it is applied instead of holding it. */
const KEEP_PARSED_UP_TO = 1000;

/**
 * The reconcile loop: turns file changes into desired state per key, applies each key with
 * its kind's applier in ONE transaction, records status, retries failures with backoff and
 * prunes what disappeared. Knows no manifest kind of its own.
 */
export class Reconciler extends EventEmitter implements SourceSink {
  readonly status: StatusStore;
  readonly #db: Store;
  readonly #schemas: SchemaRegistry;
  readonly #appliers = new Map<string, Applier>();
  readonly #root: string;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #backoff: BackoffPolicy;
  readonly #massPruneRatio: number;
  readonly #ids: IdAllocator;
  readonly #queue: WorkQueue<string>;
  readonly #desired = new Map<string, Desired>();
  readonly #lastOutcome = new Map<string, Outcome>();
  #ready = false;
  #pruneBlocked: PruneBlocked | undefined;
  /** Keys whose last run threw before any outcome was recorded (the store itself failed). */
  readonly #storeFailures = new Map<string, { error: Error; attempts: number }>();

  constructor(opts: ReconcilerOptions) {
    super();
    this.#db = opts.db;
    this.#schemas = opts.schemas;
    for (const a of opts.appliers) this.#appliers.set(a.kind, a);
    this.#root = opts.root;
    this.#clock = opts.clock ?? systemClock;
    this.#random = opts.random ?? Math.random;
    this.#backoff = opts.backoff ?? DEFAULT_BACKOFF;
    this.#massPruneRatio = opts.massPruneRatio ?? 0.5;
    this.status = new StatusStore(opts.db);
    this.#ids = new IdAllocator({ db: opts.db, clock: this.#clock });
    this.#queue = new WorkQueue<string>({
      process: (key) => this.#reconcileGuarded(key),
      concurrency: opts.concurrency ?? 4,
      scheduler: opts.scheduler ?? realScheduler,
    });
  }

  get root(): string {
    return this.#root;
  }

  /** The kinds an applier is registered for, in apply order. */
  get kinds(): string[] {
    return [...this.#appliers.values()].sort((a, b) => a.order - b.order).map((a) => a.kind);
  }

  /** True once the first full sync has finished. */
  get ready(): boolean {
    return this.#ready;
  }

  get pruneBlocked(): PruneBlocked | undefined {
    return this.#pruneBlocked;
  }

  listStatus(filter?: StatusFilter): StatusRecord[] {
    return this.status.list(filter);
  }

  /** A full relist: every manifest path under the root. Prunes what is no longer there. */
  async full(paths: string[], meta: SyncOptions = {}): Promise<SyncReport> {
    const report = emptyReport();
    const present = new Set(paths.filter(isManifestPath));
    const index = this.status.index();
    const keys = await this.#scanAll([...present], meta, report, index);
    // Files the store knows but the source no longer has.
    const gone = [...index.keys()].filter((p) => !present.has(p));
    const pruneKeys = gone.flatMap((p) => this.#forgetPath(p));
    await this.#applyInOrder(keys, report);
    await this.#prune(pruneKeys, meta, report);
    if (!this.#ready) {
      this.#ready = true;
      this.emit('ready', report);
    }
    return report;
  }

  /** Some files changed or disappeared (a watcher batch, a git diff). */
  async delta(changed: string[], removed: string[], meta: SyncOptions = {}): Promise<SyncReport> {
    const report = emptyReport();
    const keys = await this.#scanAll(changed.filter(isManifestPath), meta, report);
    const pruneKeys = removed.filter(isManifestPath).flatMap((p) => this.#forgetPath(p));
    await this.#applyInOrder(keys, report);
    await this.#prune(pruneKeys, meta, report);
    return report;
  }

  /**
   * Reconciles one file now and answers with its outcome (the API's path: write the file,
   * then call this). `null` when the file is gone and owned nothing.
   */
  async reconcilePath(relPath: string, meta: SourceMeta = {}, written?: WrittenFile): Promise<Outcome | null> {
    const report = emptyReport();
    const bytes = written?.bytes ?? (await readManifestFile(join(this.#root, relPath)));
    if (bytes === null) {
      const keys = this.#forgetPath(relPath);
      await this.#prune(keys, { ...meta, allowMassPrune: true }, report);
      return keys.length ? (this.#lastOutcome.get(keys[0]) ?? null) : null;
    }
    const key = this.#scan(relPath, meta, report, undefined, written);
    if (!key) {
      const row = this.status.byPath(relPath)[0];
      return row ? outcomeOf(row) : null;
    }
    await this.#queue.add(key);
    const failure = this.#storeFailures.get(key);
    if (failure) throw new UnavailableError(`${key} is written but could not be applied yet (${failure.error.message}); it is retried`);
    return this.#lastOutcome.get(key) ?? outcomeOf(this.status.get(key) as StatusRecord);
  }

  /** Re-runs one key now (sync now, a retry on demand). */
  async reconcileKey(key: string): Promise<Outcome | undefined> {
    await this.#queue.add(key);
    return this.#lastOutcome.get(key);
  }

  /** What a full sync of `paths` would do, changing nothing. */
  async plan(paths: string[]): Promise<PlanEntry[]> {
    const out: PlanEntry[] = [];
    const present = new Set(paths.filter(isManifestPath));
    for (const path of [...present].sort()) {
      const bytes = await readManifestFile(join(this.#root, path));
      if (bytes === null) continue;
      if (bytes === 'too-large') {
        out.push({ key: INVALID_PREFIX + path, path, action: 'invalid', problems: [tooLarge()] });
        continue;
      }
      const r = parseManifest(path, bytes, this.#schemas);
      if (!r.ok) {
        out.push({ key: INVALID_PREFIX + path, path, action: 'invalid', problems: r.problems });
        continue;
      }
      const row = this.status.get(r.key);
      const action = !row || !isLive(row) ? 'create' : row.specHash === specHash(r.manifest) ? 'unchanged' : 'update';
      out.push({ key: r.key, path, action });
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

  // ---- scanning: files → desired state per key -------------------------------------------

  async #scanAll(
    paths: string[],
    meta: SourceMeta,
    report: SyncReport,
    index?: Map<string, { key: string; hash: string | null; phase: Phase }[]>,
  ): Promise<string[]> {
    const keys: string[] = [];
    const chunk = 256;
    // A big batch keeps only what it learnt (key, path, hash): holding thousands of parsed
    // manifests until their turn would set the peak memory; each is parsed again when applied.
    const keepParsed = paths.length <= KEEP_PARSED_UP_TO;
    for (let i = 0; i < paths.length; i += chunk) {
      // Yield between chunks so a large sync never holds the event loop (HTTP keeps answering).
      if (i > 0) await yieldToLoop();
      for (const p of paths.slice(i, i + chunk)) {
        const k = this.#scan(p, meta, report, index, undefined, keepParsed);
        if (k) keys.push(k);
      }
    }
    report.scanned += paths.length;
    return keys;
  }

  /** Reads one path; returns the key to reconcile, or undefined (unchanged, invalid, gone). */
  #scan(
    path: string,
    meta: SourceMeta,
    report: SyncReport,
    index?: Map<string, { key: string; hash: string | null; phase: Phase }[]>,
    written?: WrittenFile,
    keepParsed = true,
  ): string | undefined {
    const bytes = written?.bytes ?? readManifestFileSync(join(this.#root, path));
    if (bytes === null) return undefined;
    const known = index ? (index.get(path) ?? []) : this.status.byPath(path);
    const prevKey = known.find((r) => !r.key.startsWith(INVALID_PREFIX))?.key;
    if (bytes === 'too-large') {
      this.#markInvalid(path, prevKey, [tooLarge()], undefined, report);
      return undefined;
    }
    const hash = sha256(bytes);
    const unchanged = known.find((r) => r.hash === hash && r.phase === 'Synced');
    if (unchanged && !this.#desired.has(unchanged.key)) {
      this.#desired.set(unchanged.key, { path, hash, revision: meta.revision, author: meta.authors?.get(path) });
    }
    if (unchanged) {
      report.skipped++;
      return undefined;
    }
    const result = written?.document !== undefined ? checkDocument(path, hash, written.document, this.#schemas) : parseManifest(path, bytes, this.#schemas);
    if (!result.ok) {
      this.#markInvalid(path, prevKey, result.problems, result, report);
      return undefined;
    }
    const owner = this.#desired.get(result.key);
    if (owner && owner.path !== path && readManifestFileSync(join(this.#root, owner.path)) !== null) {
      this.#markInvalid(path, prevKey, [{ path: '', message: `${result.key} is already defined in ${owner.path}` }], result, report);
      return undefined;
    }
    if (prevKey && prevKey !== result.key) {
      // The file now defines another object: the old one goes.
      this.#desired.delete(prevKey);
      void this.#queue.add(prevKey);
    }
    // A never-valid version of this file may have left a File/ status row.
    if (known.some((r) => r.key === INVALID_PREFIX + path)) this.status.delete(INVALID_PREFIX + path);
    this.#desired.set(result.key, {
      path,
      hash: result.hash,
      manifest: keepParsed ? result.manifest : undefined,
      revision: meta.revision,
      author: meta.authors?.get(path),
    });
    return result.key;
  }

  #markInvalid(path: string, prevKey: string | undefined, problems: Problem[], result: LoadResult | undefined, report: SyncReport): void {
    const key = prevKey ?? INVALID_PREFIX + path;
    const prev = this.status.get(key);
    const kind = prev?.kind ?? (result && !result.ok ? result.kind : undefined) ?? '';
    const name = prev?.name ?? (result && !result.ok ? result.name : undefined) ?? path;
    const message = boundMessage(problems.map(formatProblem).join('; '));
    // The last good state stays: resources and spec hash are left as they are.
    this.status.put(key, { kind, name, path, hash: result?.hash ?? null, phase: 'Invalid', message, nextRetryAt: null }, this.#clock());
    report.invalid.push(key);
    this.#emit({ type: 'phase', key, kind, name, phase: 'Invalid', message });
  }

  /** The file at `path` is gone: the keys it defined are to be pruned. */
  #forgetPath(path: string): string[] {
    const keys: string[] = [];
    for (const row of this.status.byPath(path)) {
      if (row.key.startsWith(INVALID_PREFIX)) {
        this.status.delete(row.key);
        continue;
      }
      const d = this.#desired.get(row.key);
      if (d && d.path !== path) continue; // moved to another file meanwhile
      this.#desired.delete(row.key);
      keys.push(row.key);
    }
    return keys;
  }

  // ---- applying ----------------------------------------------------------------------------

  async #applyInOrder(keys: string[], report: SyncReport): Promise<void> {
    const groups = new Map<number, string[]>();
    for (const key of keys) {
      const order = this.#appliers.get(kindOf(key))?.order ?? 99;
      groups.set(order, [...(groups.get(order) ?? []), key]);
    }
    for (const order of [...groups.keys()].sort((a, b) => a - b)) {
      const group = groups.get(order) ?? [];
      await Promise.all(group.map((k) => this.#queue.add(k)));
      for (const k of group) {
        const o = this.#lastOutcome.get(k);
        if (o?.phase === 'Synced') report.applied.push(k);
        else if (o?.phase === 'Failed') report.failed.push(k);
        else if (o?.phase === 'Invalid') report.invalid.push(k);
      }
    }
  }

  async #prune(keys: string[], meta: SyncOptions, report: SyncReport): Promise<void> {
    if (keys.length === 0) return;
    const candidates = keys.map((k) => this.status.get(k)).filter((r): r is StatusRecord => !!r && isLive(r));
    if (candidates.length === 0) {
      keys.forEach((k) => this.status.delete(k));
      return;
    }
    const live = this.status.countLive();
    if (!meta.allowMassPrune && candidates.length > 1 && candidates.length > live * this.#massPruneRatio) {
      this.#pruneBlocked = { keys: candidates.map((c) => c.key), live, at: this.#clock().toISOString() };
      report.pruneBlocked = this.#pruneBlocked;
      const message = `mass prune refused: ${candidates.length} of ${live} objects would be removed; confirm with bictl sync --allow-mass-prune`;
      for (const c of candidates) {
        this.status.put(c.key, { kind: c.kind, name: c.name, message }, this.#clock());
        this.#emit({ type: 'prune-blocked', key: c.key, kind: c.kind, name: c.name, message });
      }
      return;
    }
    this.#pruneBlocked = undefined;
    // Dependents first: Dashboards and Pipelines, then Clients, then Connections and CoreModels.
    const byOrder = [...candidates].sort(
      (a, b) => (this.#appliers.get(b.kind)?.order ?? 0) - (this.#appliers.get(a.kind)?.order ?? 0),
    );
    for (const c of byOrder) {
      await this.#queue.add(c.key);
      const o = this.#lastOutcome.get(c.key);
      if (o?.phase === 'Pruned') report.pruned.push(c.key);
      else report.failed.push(c.key);
    }
  }

  /**
   * A run that throws (the store is locked, full or read-only, so not even the failure could
   * be recorded) is remembered for `reconcilePath` and retried with backoff.
   */
  async #reconcileGuarded(key: string): Promise<void> {
    try {
      await this.#reconcileKey(key);
      this.#storeFailures.delete(key);
    } catch (err) {
      const attempts = (this.#storeFailures.get(key)?.attempts ?? 0) + 1;
      this.#storeFailures.set(key, { error: err instanceof Error ? err : new Error(String(err)), attempts });
      this.#queue.addAfter(key, backoffDelay(attempts, this.#backoff, this.#random));
      throw err;
    }
  }

  async #reconcileKey(key: string): Promise<void> {
    const desired = this.#desired.get(key);
    const row = this.status.get(key);
    if (!desired) {
      if (row && isLive(row)) this.#runPrune(row);
      return;
    }
    let manifest = desired.manifest;
    if (!manifest) {
      const bytes = readManifestFileSync(join(this.#root, desired.path));
      if (bytes === null || bytes === 'too-large') return;
      const r = parseManifest(desired.path, bytes, this.#schemas);
      if (!r.ok) return this.#markInvalid(desired.path, key, r.problems, r, emptyReport());
      // The file may have moved on since the scan: what is applied is what was just read.
      desired.hash = r.hash;
      manifest = desired.manifest = r.manifest;
    }
    const hash = specHash(manifest);
    const now = this.#clock();
    const base = { kind: manifest.kind, name: manifest.metadata.name, path: desired.path, hash: desired.hash };
    if (row && row.phase === 'Synced' && row.specHash === hash) {
      this.status.put(key, { ...base, lastAttemptedRevision: desired.revision ?? row.lastAttemptedRevision }, now);
      this.#queue.cancelRetry(key);
      this.#lastOutcome.set(key, outcomeOf(this.status.get(key) as StatusRecord));
      return;
    }
    this.#runApply(key, manifest, desired, row, hash);
  }

  #runApply(key: string, manifest: Manifest, desired: Desired, row: StatusRecord | undefined, hash: string): void {
    const applier = this.#appliers.get(manifest.kind);
    const now = this.#clock();
    const actor = manifest.metadata.annotations?.[ACTOR_ANNOTATION] ?? desired.author ?? 'controller';
    const base = { kind: manifest.kind, name: manifest.metadata.name, path: desired.path, hash: desired.hash, actor };
    const previous = row && isLive(row) ? row.resourceIds : undefined;
    try {
      if (!applier) throw new StepError('apply', `no applier for kind ${manifest.kind}`);
      const problems = applier.lint?.(manifest) ?? [];
      if (problems.length === 0) problems.push(...(applier.check?.(this.#db, manifest) ?? []));
      if (problems.length) throw new StepError('validate', problems.map(formatProblem).join('; '));
      const refs = this.#db.transaction(() =>
        applier.apply({
          db: this.#db,
          ids: this.#ids,
          now,
          key,
          manifest,
          previous,
          actor,
          step: (name) => this.#emit({ type: 'step', key, kind: base.kind, name: base.name, step: name }),
        }),
      )();
      const s = this.status.put(
        key,
        {
          ...base,
          specHash: hash,
          phase: 'Synced',
          message: '',
          attempts: 0,
          nextRetryAt: null,
          resourceIds: refs,
          lastAppliedRevision: desired.revision ?? null,
          lastAttemptedRevision: desired.revision ?? null,
        },
        now,
      );
      this.#queue.cancelRetry(key);
      // Applied: the parsed manifest is not kept in memory (10,000 of them would be); it is
      // read again from its file should this key ever run without a new scan.
      desired.manifest = undefined;
      this.#finish(s);
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      try {
        if (applier?.recordFailure) {
          this.#db.transaction(() => applier.recordFailure?.({ db: this.#db, now, key, manifest, actor, error }))();
        }
      } catch {
        // The audit entry is best effort; the status below still records the failure.
      }
      const attempts = (row?.attempts ?? 0) + 1;
      const delay = backoffDelay(attempts, this.#backoff, this.#random);
      const s = this.status.put(
        key,
        {
          ...base,
          phase: 'Failed',
          message: boundMessage(error.message),
          attempts,
          nextRetryAt: new Date(now.getTime() + delay).toISOString(),
          lastAttemptedRevision: desired.revision ?? null,
        },
        now,
      );
      this.#queue.addAfter(key, delay);
      this.#finish(s, error instanceof StepError ? error.step : undefined);
    }
  }

  #runPrune(row: StatusRecord): void {
    const applier = this.#appliers.get(row.kind);
    const now = this.#clock();
    try {
      if (!applier) throw new StepError('prune', `no applier for kind ${row.kind}`);
      this.#db.transaction(() =>
        applier.prune({ db: this.#db, now, key: row.key, name: row.name, previous: row.resourceIds, actor: 'controller' }),
      )();
      const s = this.status.put(
        row.key,
        { kind: row.kind, name: row.name, phase: 'Pruned', message: '', attempts: 0, nextRetryAt: null, specHash: null },
        now,
      );
      this.#queue.cancelRetry(row.key);
      this.#finish(s);
    } catch (err) {
      const attempts = row.attempts + 1;
      const delay = backoffDelay(attempts, this.#backoff, this.#random);
      const s = this.status.put(
        row.key,
        {
          kind: row.kind,
          name: row.name,
          phase: 'Failed',
          message: boundMessage(`prune: ${(err as Error).message}`),
          attempts,
          nextRetryAt: new Date(now.getTime() + delay).toISOString(),
        },
        now,
      );
      this.#queue.addAfter(row.key, delay);
      this.#finish(s, 'prune');
    }
  }

  #finish(s: StatusRecord, step?: string): void {
    const outcome = { ...outcomeOf(s), ...(step ? { step } : {}) };
    this.#lastOutcome.set(s.key, outcome);
    this.#emit({ type: 'phase', key: s.key, kind: s.kind, name: s.name, phase: s.phase, message: s.message });
  }

  #emit(e: Omit<ReconcileEvent, 'at'>): void {
    this.emit('event', { ...e, at: this.#clock().toISOString() } satisfies ReconcileEvent);
  }
}

function emptyReport(): SyncReport {
  return { scanned: 0, applied: [], skipped: 0, invalid: [], pruned: [], failed: [] };
}

function kindOf(key: string): string {
  return key.slice(0, key.indexOf('/'));
}

function tooLarge(): Problem {
  return { path: '', message: 'file is larger than 1 MiB' };
}

function outcomeOf(s: StatusRecord): Outcome {
  return { key: s.key, phase: s.phase, message: s.message, resourceIds: s.resourceIds };
}
