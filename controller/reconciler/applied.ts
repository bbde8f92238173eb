import type { Database, Statement } from 'better-sqlite3';
import type { Manifest } from '../types.ts';
import type { RecordFacts } from './record.ts';
import type { ReconcileResult } from './types.ts';

/** Versions kept per key (the newest). */
export const APPLIED_VERSIONS_KEPT = 10;

/** One version of a manifest as the reconciler applied it. */
export interface AppliedVersion {
  version: number;
  specHash: string;
  manifest: Manifest;
  path: string | null;
  revision: string | null;
  actor: string | null;
  appliedAt: string;
}

interface Row {
  version: number;
  spec_hash: string;
  manifest: string;
  path: string | null;
  revision: string | null;
  actor: string | null;
  applied_at: string;
}

const fromRow = (r: Row): AppliedVersion => ({
  version: r.version,
  specHash: r.spec_hash,
  manifest: JSON.parse(r.manifest) as Manifest,
  path: r.path,
  revision: r.revision,
  actor: r.actor,
  appliedAt: r.applied_at,
});

/**
 * The `applied_manifests` table: every manifest the reconciler applied, as it applied it (the
 * validated document, defaults filled in), the last APPLIED_VERSIONS_KEPT per key. The store
 * holds nothing the reconciler did not apply, so the newest version is what the store holds.
 */
export class AppliedStore {
  readonly #insert: Statement;
  readonly #trim: Statement;
  readonly #list: Statement;
  readonly #get: Statement;
  readonly #forget: Statement;

  constructor(db: Database) {
    this.#forget = db.prepare('DELETE FROM applied_manifests WHERE key = ?');
    this.#insert = db.prepare(`INSERT INTO applied_manifests (key, version, spec_hash, manifest, path, revision, actor, applied_at)
      VALUES (@key, COALESCE((SELECT MAX(version) FROM applied_manifests WHERE key = @key), 0) + 1, @spec_hash, @manifest, @path, @revision, @actor, @applied_at)`);
    this.#trim = db.prepare(`DELETE FROM applied_manifests WHERE key = ? AND version <= (SELECT MAX(version) FROM applied_manifests WHERE key = ?) - ${APPLIED_VERSIONS_KEPT}`);
    this.#list = db.prepare('SELECT * FROM applied_manifests WHERE key = ? ORDER BY version DESC');
    this.#get = db.prepare('SELECT * FROM applied_manifests WHERE key = ? AND version = ?');
  }

  /** Every kept version of these keys removed (a purged client's objects: nothing of it stays). */
  forget(keys: Iterable<string>): void {
    for (const key of keys) this.#forget.run(key);
  }

  /** Newest first. */
  list(key: string): AppliedVersion[] {
    return (this.#list.all(key) as Row[]).map(fromRow);
  }

  latest(key: string): AppliedVersion | undefined {
    return this.list(key)[0];
  }

  get(key: string, version: number): AppliedVersion | undefined {
    const row = this.#get.get(key, version) as Row | undefined;
    return row && fromRow(row);
  }

  /** The Recorder's observer: a successful apply (not an unchanged key run again) adds a version. */
  observe(result: ReconcileResult, facts: RecordFacts, at: Date): void {
    if (result.phase !== 'Synced' || !facts.applied || !facts.manifest || !facts.specHash) return;
    this.#insert.run({
      key: result.key,
      spec_hash: facts.specHash,
      manifest: JSON.stringify(facts.manifest),
      path: facts.path ?? null,
      revision: facts.revision ?? null,
      actor: facts.actor ?? null,
      applied_at: at.toISOString(),
    });
    this.#trim.run(result.key, result.key);
  }
}
