import type { ConnectionOwnership } from '../../contract.ts';
import type { Store } from '../../store/db.ts';

/** The stored columns of a connection that say where it points and how its password is held (table `connections`, owned by this kind). */
export interface ConnectionRow {
  connection_id: string;
  vendor: string;
  account_url: string | null;
  warehouse: string | null;
  database_name: string | null;
  schema_name: string | null;
  username: string | null;
  password_env: string | null;
  secret_ref: string | null;
}

/** Who owns a stored connection, and whether it is shared (undefined: no such connection). */
export function connectionOwnership(db: Store, connectionId: string): ConnectionOwnership | undefined {
  const row = db.statements.prepare('SELECT owner_client_id, shared FROM connections WHERE connection_id = ?').get(connectionId) as
    | { owner_client_id: string | null; shared: number }
    | undefined;
  return row && { owner: row.owner_client_id, shared: row.shared === 1 };
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

/** The client owning the connection a manifest defines (null: none, or no such connection). */
export function connectionManifestOwner(db: Store, key: string): string | null {
  const row = db.statements.prepare('SELECT owner_client_id FROM connections WHERE manifest_key = ? LIMIT 1').get(key) as { owner_client_id: string | null } | undefined;
  return row?.owner_client_id ?? null;
}
