import { deserialize, serialize } from 'node:v8';
import { checkDocument, parseManifest, sha256, type LoadResult } from '../manifest/loader.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { Manifest, Phase, Problem } from '../types.ts';
import type { SourceFile } from './types.ts';

/** The status key of a file that never defined a valid object. */
export const INVALID_PREFIX = 'File/';

/** What the desired state holds for one key: where it is defined, and (for a while) its parsed manifest. */
export interface Desired {
  path: string;
  hash: string;
  /** Dropped once applied (10,000 parsed manifests would set the peak memory); parsed again from the source when needed. */
  manifest?: Manifest;
  /**
   * A big scan's parsed manifest, serialized (v8): a quarter of the object's heap and ~40 times
   * cheaper to restore than parsing the YAML again. Dropped with `manifest`.
   */
  packed?: Buffer;
  author?: string;
  /** The API key (keyId) an API write came with: the audit entry's actor is that key. */
  keyId?: string;
  revision?: string;
  /** `ClientSet/<name>` when a ClientSet generated the object (its manifest is always held: there is no file to read it from). */
  generatedBy?: string;
  inputId?: string;
}

/** What the store knows about a path: its rows (key, content hash, phase, reason). */
export interface KnownRow {
  key: string;
  hash: string | null;
  phase: Phase;
  reason?: string | null;
}

export interface ScanMeta {
  revision?: string;
  author?: string;
  keyId?: string;
}

/** The decision for one delivered file. */
export type Scanned =
  /** Unchanged since it was last applied: nothing to do (`key` to release a refused prune of it). */
  | { type: 'unchanged'; key: string; row: KnownRow }
  /** It cannot become desired state: record it Invalid under `key`. */
  | { type: 'invalid'; key: string; kind: string; name: string; path: string; hash: string | null; reason: string; problems: Problem[] }
  /**
   * Reconcile `key`; `superseded` is the key this file defined before (to be pruned), `staleInvalidRow` a File/ row to drop,
   * `displaced` the ClientSet whose generated object this file now defines, `warnings` the file's unknown fields.
   */
  | { type: 'reconcile'; key: string; superseded?: string; staleInvalidRow?: string; displaced?: string; warnings: Problem[] };

export interface DesiredStateOptions {
  schemas: SchemaRegistry;
  /** Whether a path still exists at the source (a second file defining the same key). */
  exists(path: string): boolean;
}

/**
 * Desired state per key, built from the files the sources deliver. Decides what a delivered
 * file means (unchanged, invalid, defined twice, a new or changed object) and writes nothing:
 * the reconciler records the decisions.
 */
export class DesiredState {
  readonly #schemas: SchemaRegistry;
  readonly #exists: (path: string) => boolean;
  readonly #byKey = new Map<string, Desired>();

  constructor(opts: DesiredStateOptions) {
    this.#schemas = opts.schemas;
    this.#exists = opts.exists;
  }

  get(key: string): Desired | undefined {
    return this.#byKey.get(key);
  }

  delete(key: string): void {
    this.#byKey.delete(key);
  }

  /**
   * One delivered file. `known` are the store's rows for its path; `document` the already parsed
   * content of an API write (so it is not parsed again); `keepParsed` false for big scans (the
   * manifest is kept serialized).
   */
  scan(file: SourceFile, known: KnownRow[], meta: ScanMeta, opts: { document?: unknown; keepParsed?: boolean } = {}): Scanned {
    const path = file.path;
    const prevKey = known.find((r) => !r.key.startsWith(INVALID_PREFIX))?.key;
    if ('unreadable' in file) {
      return { type: 'invalid', key: prevKey ?? INVALID_PREFIX + path, kind: '', name: path, path, hash: null, reason: 'unreadable', problems: [{ path: '', message: file.unreadable }] };
    }
    const hash = sha256(file.bytes);
    const unchanged = known.find((r) => r.hash === hash && r.phase === 'Synced');
    if (unchanged) {
      if (!this.#byKey.has(unchanged.key)) this.#byKey.set(unchanged.key, { path, hash, revision: meta.revision, author: meta.author, ...(meta.keyId ? { keyId: meta.keyId } : {}) });
      return { type: 'unchanged', key: unchanged.key, row: unchanged };
    }
    const result: LoadResult = opts.document !== undefined ? checkDocument(path, hash, opts.document, this.#schemas) : parseManifest(path, file.bytes, this.#schemas, hash);
    if (!result.ok) {
      return { type: 'invalid', key: prevKey ?? INVALID_PREFIX + path, kind: result.kind ?? '', name: result.name ?? path, path, hash, reason: result.reason, problems: result.problems };
    }
    const owner = this.#byKey.get(result.key);
    // A file's object wins over a generated one of the same key (the set's input turns Invalid).
    const displaced = owner?.generatedBy;
    if (owner && !displaced && owner.path !== path && this.#exists(owner.path)) {
      const problems = [{ path: '', message: `${result.key} is already defined in ${owner.path}` }];
      return { type: 'invalid', key: prevKey ?? INVALID_PREFIX + path, kind: result.manifest.kind, name: result.manifest.metadata.name, path, hash, reason: 'conflict', problems };
    }
    let superseded: string | undefined;
    if (prevKey && prevKey !== result.key) {
      // The file now defines another object: the old one goes.
      this.#byKey.delete(prevKey);
      superseded = prevKey;
    }
    this.#byKey.set(result.key, {
      path,
      hash,
      ...(opts.keepParsed === false ? { packed: serialize(result.manifest) } : { manifest: result.manifest }),
      revision: meta.revision,
      author: meta.author,
      ...(meta.keyId ? { keyId: meta.keyId } : {}),
    });
    const staleInvalidRow = known.some((r) => r.key === INVALID_PREFIX + path) ? INVALID_PREFIX + path : undefined;
    return {
      type: 'reconcile',
      key: result.key,
      ...(superseded ? { superseded } : {}),
      ...(staleInvalidRow ? { staleInvalidRow } : {}),
      ...(displaced ? { displaced } : {}),
      warnings: result.warnings,
    };
  }

  /**
   * The file at `path` is gone: returns the keys it defined (to be pruned) and forgets them.
   * Keys that moved to another file meanwhile stay. `File/` rows are returned apart (to delete).
   */
  forget(path: string, rows: KnownRow[]): { prune: string[]; invalidRows: string[] } {
    const prune: string[] = [];
    const invalidRows: string[] = [];
    for (const row of rows) {
      if (row.key.startsWith(INVALID_PREFIX)) {
        invalidRows.push(row.key);
        continue;
      }
      const d = this.#byKey.get(row.key);
      if (d && d.path !== path) continue;
      this.#byKey.delete(row.key);
      prune.push(row.key);
    }
    return { prune, invalidRows };
  }

  /** The parsed manifest of `key` as scanned (restored when it was kept serialized), if still held. */
  manifestOf(key: string): Manifest | undefined {
    const d = this.#byKey.get(key);
    if (!d) return undefined;
    return d.manifest ?? (d.packed ? (deserialize(d.packed) as Manifest) : undefined);
  }

  /** `key` was applied: its parsed manifest is not kept (read and parsed again from the source when needed). */
  release(key: string): void {
    const d = this.#byKey.get(key);
    if (!d || d.generatedBy) return;
    d.manifest = undefined;
    d.packed = undefined;
  }

  /** An object a ClientSet generated is desired (`entry.manifest` held: there is no file behind it). */
  setGenerated(key: string, entry: Desired & { manifest: Manifest; generatedBy: string }): void {
    this.#byKey.set(key, entry);
  }

  /** The path of the file that defines `key`, when a file (not a ClientSet) does. */
  fileOf(key: string): string | undefined {
    const d = this.#byKey.get(key);
    return d && !d.generatedBy ? d.path : undefined;
  }

  /** Parses the file of `key` again (its manifest was dropped after a scan or an apply). */
  reparse(key: string, file: SourceFile | null): { ok: true; manifest: Manifest } | { ok: false; file: SourceFile | null; result?: LoadResult } {
    const d = this.#byKey.get(key);
    if (!d || !file || 'unreadable' in file) return { ok: false, file };
    const r = parseManifest(d.path, file.bytes, this.#schemas);
    if (!r.ok || r.key !== key) return { ok: false, file, result: r };
    // The file may have moved on since the scan: what is applied is what was just read.
    d.hash = r.hash;
    d.manifest = r.manifest;
    d.packed = undefined;
    return { ok: true, manifest: r.manifest };
  }
}
