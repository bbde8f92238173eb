import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { queryStore } from './harness.ts';

/** Store invariants that must hold after any crash or fault; each violation as a sentence. */
export function storeInvariants(dbPath: string): string[] {
  const problems: string[] = [];
  const integrity = queryStore<{ integrity_check: string }>(dbPath, 'PRAGMA integrity_check');
  if (integrity.map((r) => r.integrity_check).join(',') !== 'ok') problems.push(`integrity_check: ${JSON.stringify(integrity)}`);
  const fk = queryStore<Record<string, unknown>>(dbPath, 'PRAGMA foreign_key_check');
  if (fk.length) problems.push(`foreign_key_check: ${JSON.stringify(fk.slice(0, 5))}`);

  // No half client: an ACTIVE client has every resource its registry row names…
  const clients = queryStore<{ client_id: string; model_id: string | null; vdm_ids: string; facade_ids: string; experiment_ids: string; status: string }>(
    dbPath,
    'SELECT client_id, model_id, vdm_ids, facade_ids, experiment_ids, status FROM clients',
  );
  const has = (table: string, col: string, id: string) => queryStore(dbPath, `SELECT 1 FROM ${table} WHERE ${col} = ?`, id).length > 0;
  for (const c of clients.filter((r) => r.status === 'ACTIVE')) {
    if (!c.model_id || !has('semantic_models', 'model_id', c.model_id)) problems.push(`client ${c.client_id}: model ${c.model_id} missing`);
    for (const v of JSON.parse(c.vdm_ids) as string[]) if (!has('vdms', 'vdm_id', v)) problems.push(`client ${c.client_id}: VDM ${v} missing`);
    for (const f of JSON.parse(c.facade_ids) as string[]) if (!has('facades', 'facade_id', f)) problems.push(`client ${c.client_id}: facade ${f} missing`);
    for (const e of JSON.parse(c.experiment_ids) as string[]) if (!has('experiments', 'experiment_id', e)) problems.push(`client ${c.client_id}: experiment ${e} missing`);
  }
  // …and no resources of a client that is not ACTIVE (a failed onboarding leaves nothing).
  const active = new Set(clients.filter((r) => r.status === 'ACTIVE').map((r) => r.client_id));
  for (const m of queryStore<{ model_id: string; client_id: string }>(dbPath, 'SELECT model_id, client_id FROM semantic_models')) {
    if (!active.has(m.client_id)) problems.push(`model ${m.model_id} belongs to ${m.client_id}, which is not ACTIVE`);
  }
  for (const f of queryStore<{ facade_id: string; client_id: string | null }>(dbPath, 'SELECT facade_id, client_id FROM facades WHERE client_id IS NOT NULL')) {
    if (f.client_id && !active.has(f.client_id)) problems.push(`facade ${f.facade_id} belongs to ${f.client_id}, which is not ACTIVE`);
  }

  // No duplicate IDs in the future: every sequence is at or past the highest ID in use.
  const seqs = new Map(queryStore<{ prefix: string; year: number; last: number }>(dbPath, 'SELECT prefix, year, last FROM id_sequences').map((r) => [`${r.prefix}${r.year}`, r.last]));
  const used: [string, string, string][] = [
    ['semantic_models', 'model_id', 'SM'],
    ['vdms', 'vdm_id', 'V'],
    ['facades', 'facade_id', 'F'],
    ['experiments', 'experiment_id', 'E'],
    ['connections', 'connection_id', 'D'],
  ];
  for (const [table, col, prefix] of used) {
    for (const { id } of queryStore<{ id: string }>(dbPath, `SELECT ${col} AS id FROM ${table}`)) {
      const m = new RegExp(`^${prefix}(\\d{4})A(\\d{5})$`).exec(id);
      if (!m) continue;
      const last = seqs.get(`${prefix}${m[1]}`) ?? 0;
      if (Number(m[2]) > last) problems.push(`${id} in ${table} is past its sequence ${prefix}${m[1]} = ${last}: a later ID would repeat it`);
    }
  }
  return problems;
}

/** After a sync, the manifests folder and the store agree: every file Synced at its current hash. */
export function folderStoreAgreement(dbPath: string, manifestsDir: string, files: string[]): string[] {
  const problems: string[] = [];
  const rows = queryStore<{ key: string; path: string | null; hash: string | null; phase: string }>(dbPath, 'SELECT key, path, hash, phase FROM manifests');
  const byPath = new Map<string, (typeof rows)[number][]>();
  for (const r of rows) if (r.path) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);
  for (const f of files) {
    const hash = createHash('sha256').update(readFileSync(join(manifestsDir, f))).digest('hex');
    const rs = byPath.get(f) ?? [];
    if (!rs.some((r) => r.phase === 'Synced' && r.hash === hash)) problems.push(`${f}: not Synced at its current content (${JSON.stringify(rs.map((r) => [r.key, r.phase]))})`);
  }
  for (const r of rows) {
    if (r.phase === 'Synced' && r.path && !existsSync(join(manifestsDir, r.path))) problems.push(`${r.key}: Synced but its file ${r.path} is gone`);
  }
  return problems;
}
