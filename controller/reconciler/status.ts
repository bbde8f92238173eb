import type { Database, Statement } from 'better-sqlite3';
import type { ManifestStatus, Phase, ResourceRefs } from '../types.ts';

interface Row {
  key: string;
  kind: string;
  name: string;
  path: string | null;
  hash: string | null;
  spec_hash: string | null;
  phase: Phase;
  reason: string | null;
  message: string;
  attempts: number;
  next_retry_at: string | null;
  resource_ids: string;
  applied_revision: string | null;
  attempted_revision: string | null;
  actor: string | null;
  last_transition_at: string;
  updated_at: string;
  generated_by: string | null;
  input_id: string | null;
}

/** The reconciler's own row per manifest key, with what it needs beyond the public status. */
export interface StatusRecord extends ManifestStatus {
  specHash: string | null;
  /** When the row was last written (any field). */
  updatedAt: string;
}

export type StatusPatch = Partial<Omit<StatusRecord, 'key' | 'lastTransitionAt' | 'updatedAt'>> & { kind: string; name: string };

export interface StatusFilter {
  kind?: string;
  phase?: Phase;
}

function fromRow(r: Row): StatusRecord {
  return {
    key: r.key,
    kind: r.kind,
    name: r.name,
    path: r.path,
    hash: r.hash,
    specHash: r.spec_hash,
    phase: r.phase,
    reason: r.reason,
    message: r.message,
    attempts: r.attempts,
    nextRetryAt: r.next_retry_at,
    resourceIds: JSON.parse(r.resource_ids) as ResourceRefs,
    lastAppliedRevision: r.applied_revision,
    lastAttemptedRevision: r.attempted_revision,
    actor: r.actor,
    lastTransitionAt: r.last_transition_at,
    updatedAt: r.updated_at,
    generatedBy: r.generated_by,
    inputId: r.input_id,
  };
}

/** Reads and writes the `manifests` table. */
export class StatusStore {
  readonly #get: Statement;
  readonly #byPath: Statement;
  readonly #upsert: Statement;
  readonly #delete: Statement;
  readonly #countLive: Statement;
  readonly #byReason: Statement;
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
    this.#get = db.prepare('SELECT * FROM manifests WHERE key = ?');
    this.#byPath = db.prepare("SELECT * FROM manifests WHERE path = ? AND phase <> 'Pruned' AND generated_by IS NULL ORDER BY key");
    this.#upsert = db.prepare(`INSERT INTO manifests (key, kind, name, path, hash, spec_hash, phase, reason, message, attempts,
        next_retry_at, resource_ids, applied_revision, attempted_revision, actor, last_transition_at, updated_at, generated_by, input_id)
      VALUES (@key, @kind, @name, @path, @hash, @spec_hash, @phase, @reason, @message, @attempts, @next_retry_at, @resource_ids,
        @applied_revision, @attempted_revision, @actor, @last_transition_at, @updated_at, @generated_by, @input_id)
      ON CONFLICT (key) DO UPDATE SET kind = @kind, name = @name, path = @path, hash = @hash, spec_hash = @spec_hash,
        phase = @phase, reason = @reason, message = @message, attempts = @attempts, next_retry_at = @next_retry_at,
        resource_ids = @resource_ids, applied_revision = @applied_revision, attempted_revision = @attempted_revision,
        actor = @actor, last_transition_at = @last_transition_at, updated_at = @updated_at, generated_by = @generated_by,
        input_id = @input_id`);
    this.#delete = db.prepare('DELETE FROM manifests WHERE key = ?');
    this.#countLive = db.prepare("SELECT COUNT(*) FROM manifests WHERE phase <> 'Pruned' AND spec_hash IS NOT NULL");
    this.#byReason = db.prepare('SELECT * FROM manifests WHERE reason = ? ORDER BY key');
  }

  get(key: string): StatusRecord | undefined {
    const row = this.#get.get(key) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  /** Live (not pruned) rows whose file is `path`. */
  byPath(path: string): StatusRecord[] {
    return (this.#byPath.all(path) as Row[]).map(fromRow);
  }

  /**
   * Merges `patch` into the row of `key`; the transition time moves only when the phase does.
   * `known.prev` is the row as the caller just read it (not read again; undefined: there is none).
   */
  put(key: string, patch: StatusPatch, now: Date, known?: { prev: StatusRecord | undefined }): StatusRecord {
    const prev = known ? known.prev : this.get(key);
    const at = now.toISOString();
    const next: StatusRecord = {
      key,
      path: null,
      hash: null,
      specHash: null,
      phase: 'Pending',
      reason: null,
      message: '',
      attempts: 0,
      nextRetryAt: null,
      resourceIds: {},
      lastAppliedRevision: null,
      lastAttemptedRevision: null,
      actor: null,
      generatedBy: null,
      inputId: null,
      ...prev,
      ...patch,
      lastTransitionAt: prev && prev.phase === (patch.phase ?? prev.phase) ? prev.lastTransitionAt : at,
      updatedAt: at,
    };
    this.#upsert.run({
      key,
      kind: next.kind,
      name: next.name,
      path: next.path,
      hash: next.hash,
      spec_hash: next.specHash,
      phase: next.phase,
      reason: next.reason,
      message: next.message,
      attempts: next.attempts,
      next_retry_at: next.nextRetryAt,
      resource_ids: JSON.stringify(next.resourceIds),
      applied_revision: next.lastAppliedRevision,
      attempted_revision: next.lastAttemptedRevision,
      actor: next.actor,
      last_transition_at: next.lastTransitionAt,
      updated_at: at,
      generated_by: next.generatedBy,
      input_id: next.inputId,
    });
    return next;
  }

  delete(key: string): void {
    this.#delete.run(key);
  }

  list(filter: StatusFilter = {}): StatusRecord[] {
    const where: string[] = [];
    const args: string[] = [];
    if (filter.kind) {
      where.push('kind = ?');
      args.push(filter.kind);
    }
    if (filter.phase) {
      where.push('phase = ?');
      args.push(filter.phase);
    }
    const sql = `SELECT * FROM manifests ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY kind, name`;
    return (this.#db.prepare(sql).all(...args) as Row[]).map(fromRow);
  }

  /** How many objects a prune could remove: applied at least once and not pruned (see isLive). */
  countLive(): number {
    return this.#countLive.pluck().get() as number;
  }

  /** Rows of the objects the ClientSet `generatedBy` (`ClientSet/<name>`) generated, and of its invalid inputs. */
  generatedBy(generatedBy: string): StatusRecord[] {
    return (this.#db.prepare('SELECT * FROM manifests WHERE generated_by = ? ORDER BY key').all(generatedBy) as Row[]).map(fromRow);
  }

  /** Rows whose reason is `reason` (e.g. every key a refused mass prune left in place). */
  byReason(reason: string): StatusRecord[] {
    return (this.#byReason.all(reason) as Row[]).map(fromRow);
  }

  /** path → (key, hash, phase) of every live row: one query for a whole no-op resync. */
  index(): Map<string, { key: string; hash: string | null; phase: Phase }[]> {
    const rows = this.#db
      .prepare("SELECT key, path, hash, phase FROM manifests WHERE phase <> 'Pruned' AND path IS NOT NULL AND generated_by IS NULL")
      .all() as { key: string; path: string; hash: string | null; phase: Phase }[];
    const out = new Map<string, { key: string; hash: string | null; phase: Phase }[]>();
    for (const r of rows) {
      const list = out.get(r.path) ?? [];
      list.push({ key: r.key, hash: r.hash, phase: r.phase });
      out.set(r.path, list);
    }
    return out;
  }
}

/** A manifest that has been applied at least once and not pruned: what a prune would remove. */
export function isLive(s: StatusRecord): boolean {
  return s.phase !== 'Pruned' && s.specHash !== null;
}
