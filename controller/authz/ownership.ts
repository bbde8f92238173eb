import type { Store } from '../store/db.ts';
import { resolveSteps } from '../kinds/pipeline/normalize.ts';
import type { PipelineSpec } from '../kinds/pipeline/types.ts';

/**
 * Who owns what (docs/contract/design.md, "Tenancy and authorization"): every object belongs to at most one
 * client. These read the stored owner; appliers store it when they create the object.
 */

export interface ConnectionOwnership {
  owner: string | null;
  shared: boolean;
}

export function connectionOwnership(db: Store, connectionId: string): ConnectionOwnership | undefined {
  const row = db.statements.prepare('SELECT owner_client_id, shared FROM connections WHERE connection_id = ?').get(connectionId) as
    | { owner_client_id: string | null; shared: number }
    | undefined;
  return row && { owner: row.owner_client_id, shared: row.shared === 1 };
}

/** `undefined`: no such object; `null`: it exists and belongs to no client (admins only). */
export type Owner = string | null | undefined;

export function vdmOwner(db: Store, vdmId: string): Owner {
  return (db.statements.prepare('SELECT client_id FROM vdms WHERE vdm_id = ?').get(vdmId) as { client_id: string } | undefined)?.client_id;
}

export function dashboardOwner(db: Store, facadeId: string): Owner {
  const row = db.statements.prepare('SELECT owner_client_id FROM facades WHERE facade_id = ?').get(facadeId) as { owner_client_id: string | null } | undefined;
  return row ? row.owner_client_id : undefined;
}

export function pipelineOwner(db: Store, pipelineId: string): Owner {
  const row = db.statements.prepare('SELECT owner_client_id FROM pipelines WHERE pipeline_id = ?').get(pipelineId) as { owner_client_id: string | null } | undefined;
  return row ? row.owner_client_id : undefined;
}

/** The client of a manifest's objects (status rows and events are filtered by it). */
export function manifestOwner(db: Store, key: string): string | null {
  const slash = key.indexOf('/');
  const kind = key.slice(0, slash);
  if (kind === 'Client') return key.slice(slash + 1);
  const table = ({ Connection: 'connections', Dashboard: 'facades', Pipeline: 'pipelines' } as Record<string, string>)[kind];
  if (!table) return null;
  const row = db.statements.prepare(`SELECT owner_client_id FROM ${table} WHERE manifest_key = ? LIMIT 1`).get(key) as { owner_client_id: string | null } | undefined;
  return row?.owner_client_id ?? null;
}

/** Every connection a pipeline uses: source, destination and step overrides. */
export function pipelineConnections(spec: PipelineSpec): string[] {
  const ids = resolveSteps(spec).map((s) => s.config.connectionId);
  return [...new Set([spec.source.connectionId, spec.destination.connectionId, ...ids].filter((id): id is string => typeof id === 'string' && id !== ''))];
}

/**
 * The one client owning these connections (shared ones do not count), or null when none does or
 * they belong to different clients, or one of them belongs to no client at all.
 */
export function ownerOfConnections(db: Store, connectionIds: readonly string[]): string | null {
  const owners = new Set<string | null>();
  for (const id of connectionIds) {
    const c = connectionOwnership(db, id);
    if (c?.shared) continue;
    owners.add(c?.owner ?? null);
  }
  const [only] = owners;
  return owners.size === 1 && only !== undefined ? only : null;
}

/** A standalone dashboard's owner: its connection's, or (on a shared connection) its VDM's client. */
export function ownerOfDashboard(db: Store, dataSource: { dbId: string; vdmId?: string }): string | null {
  const c = connectionOwnership(db, dataSource.dbId);
  if (c && !c.shared) return c.owner;
  return (dataSource.vdmId ? vdmOwner(db, dataSource.vdmId) : null) ?? null;
}
