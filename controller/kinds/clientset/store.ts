import type { Store } from '../../store/db.ts';
import type { Manifest } from '../../types.ts';
import type { ClientSetSpec, Input } from './types.ts';

/** A set as its table keeps it: the last valid spec (used when its file goes) and its rollout state. */
export interface SetRow {
  name: string;
  manifestKey: string;
  path: string | null;
  spec: ClientSetSpec;
  present: boolean;
  digest: string | null;
  wave: number | null;
  paused: boolean;
  reason: string | null;
  approvedDigest: string | null;
  approvedWave: number;
  updatedAt: string;
}

/** A tenant: its input as last seen and the version it was last released (its last applied documents). */
export interface TenantRow {
  setName: string;
  inputId: string;
  input: Input;
  docs: Manifest[];
  keys: string[];
  digest: string;
  /** The digest of its last render (differs from `digest` while it waits for its wave). */
  rendered: string | null;
  wave: number | null;
  gone: 'orphaned' | 'offboarded' | null;
}

export interface HistoryRow {
  digest: string;
  at: string;
  tenants: number;
}

/** How many rendered digests a set keeps. */
export const HISTORY_KEPT = 5;

interface RawSet {
  name: string;
  manifest_key: string;
  path: string | null;
  spec: string;
  present: number;
  digest: string | null;
  wave: number | null;
  paused: number;
  reason: string | null;
  approved_digest: string | null;
  approved_wave: number;
  updated_at: string;
}

interface RawTenant {
  set_name: string;
  input_id: string;
  input: string;
  docs: string;
  keys: string;
  digest: string;
  rendered: string | null;
  wave: number | null;
  gone: 'orphaned' | 'offboarded' | null;
}

/** The ClientSet tables (migration 0023); every SQL statement of the kind lives here. */
export class ClientSetStore {
  readonly #db: Store;

  constructor(db: Store) {
    this.#db = db;
  }

  names(): string[] {
    return this.#db.prepare('SELECT name FROM clientsets ORDER BY name').pluck().all() as string[];
  }

  get(name: string): SetRow | undefined {
    const r = this.#db.prepare('SELECT * FROM clientsets WHERE name = ?').get(name) as RawSet | undefined;
    return r && setFromRow(r);
  }

  list(): SetRow[] {
    return (this.#db.prepare('SELECT * FROM clientsets ORDER BY name').all() as RawSet[]).map(setFromRow);
  }

  putSet(row: SetRow): void {
    this.#db
      .prepare(
        `INSERT INTO clientsets (name, manifest_key, path, spec, present, digest, wave, paused, reason, approved_digest, approved_wave, updated_at)
         VALUES (@name, @manifestKey, @path, @spec, @present, @digest, @wave, @paused, @reason, @approvedDigest, @approvedWave, @updatedAt)
         ON CONFLICT (name) DO UPDATE SET manifest_key = @manifestKey, path = @path, spec = @spec, present = @present, digest = @digest,
           wave = @wave, paused = @paused, reason = @reason, approved_digest = @approvedDigest, approved_wave = @approvedWave, updated_at = @updatedAt`,
      )
      .run({ ...row, spec: JSON.stringify(row.spec), present: row.present ? 1 : 0, paused: row.paused ? 1 : 0 });
  }

  tenants(setName: string): TenantRow[] {
    return (this.#db.prepare('SELECT * FROM clientset_tenants WHERE set_name = ? ORDER BY input_id').all(setName) as RawTenant[]).map((r) => ({
      setName: r.set_name,
      inputId: r.input_id,
      input: JSON.parse(r.input) as Input,
      docs: JSON.parse(r.docs) as Manifest[],
      keys: JSON.parse(r.keys) as string[],
      digest: r.digest,
      rendered: r.rendered,
      wave: r.wave,
      gone: r.gone,
    }));
  }

  putTenant(t: TenantRow, now: Date): void {
    this.#db
      .prepare(
        `INSERT INTO clientset_tenants (set_name, input_id, input, docs, keys, digest, rendered, wave, gone, updated_at)
         VALUES (@setName, @inputId, @input, @docs, @keys, @digest, @rendered, @wave, @gone, @at)
         ON CONFLICT (set_name, input_id) DO UPDATE SET input = @input, docs = @docs, keys = @keys, digest = @digest, rendered = @rendered, wave = @wave,
           gone = @gone, updated_at = @at`,
      )
      .run({ ...t, input: JSON.stringify(t.input), docs: JSON.stringify(t.docs), keys: JSON.stringify(t.keys), at: now.toISOString() });
  }

  history(setName: string): HistoryRow[] {
    return this.#db.prepare('SELECT digest, at, tenants FROM clientset_history WHERE set_name = ? ORDER BY at DESC, rowid DESC').all(setName) as HistoryRow[];
  }

  /** Records a newly rendered digest (once per digest) and keeps the last HISTORY_KEPT. */
  addHistory(setName: string, entry: HistoryRow): void {
    const known = this.#db.prepare('SELECT 1 FROM clientset_history WHERE set_name = ? AND digest = ?').get(setName, entry.digest);
    if (known) {
      this.#db.prepare('UPDATE clientset_history SET tenants = ? WHERE set_name = ? AND digest = ?').run(entry.tenants, setName, entry.digest);
      return;
    }
    this.#db.prepare('INSERT INTO clientset_history (set_name, digest, at, tenants) VALUES (?, ?, ?, ?)').run(setName, entry.digest, entry.at, entry.tenants);
    this.#db
      .prepare(
        `DELETE FROM clientset_history WHERE set_name = ? AND rowid NOT IN
           (SELECT rowid FROM clientset_history WHERE set_name = ? ORDER BY at DESC, rowid DESC LIMIT ${HISTORY_KEPT})`,
      )
      .run(setName, setName);
  }
}

function setFromRow(r: RawSet): SetRow {
  return {
    name: r.name,
    manifestKey: r.manifest_key,
    path: r.path,
    spec: JSON.parse(r.spec) as ClientSetSpec,
    present: r.present === 1,
    digest: r.digest,
    wave: r.wave,
    paused: r.paused === 1,
    reason: r.reason,
    approvedDigest: r.approved_digest,
    approvedWave: r.approved_wave,
    updatedAt: r.updated_at,
  };
}
