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

/** How a connection is shared: any tenant may use it, each in its own schema (`tenant_schema` with `{clientId}`). */
export interface SharingColumns {
  shared: number;
  tenant_schema: string | null;
}

/** A stored connection's endpoint, credential reference and sharing (undefined: no such connection). */
export function readConnectionRow(db: Store, connectionId: string): (ConnectionRow & SharingColumns) | undefined {
  return db.statements
    .prepare(
      `SELECT connection_id, vendor, account_url, warehouse, database_name, schema_name, username, password_env, secret_ref, shared, tenant_schema
       FROM connections WHERE connection_id = ?`,
    )
    .get(connectionId) as (ConnectionRow & SharingColumns) | undefined;
}

/** The manifest that defines a stored connection (undefined: no such connection; null: none). */
export function connectionManifestKey(db: Store, connectionId: string): string | null | undefined {
  const row = db.statements.prepare('SELECT manifest_key FROM connections WHERE connection_id = ?').get(connectionId) as { manifest_key: string | null } | undefined;
  return row ? row.manifest_key : undefined;
}

/** Whether another connection than `connectionId` holds the stored secret `secretRef`. */
export function secretSharedBeyond(db: Store, secretRef: string, connectionId: string): boolean {
  return db.statements.prepare('SELECT 1 FROM connections WHERE secret_ref = ? AND connection_id <> ? LIMIT 1').get(secretRef, connectionId) !== undefined;
}

/**
 * The connections the settings UI wrote for `owner` (a connection whose manifest is its own,
 * `Connection/<ID>`), newest first.
 */
export function settingsConnectionsOf(db: Store, owner: string): string[] {
  return (
    db.statements
      .prepare("SELECT connection_id FROM connections WHERE owner_client_id = ? AND manifest_key = 'Connection/' || connection_id ORDER BY created_at DESC, connection_id DESC")
      .all(owner) as { connection_id: string }[]
  ).map((r) => r.connection_id);
}

/** The refusal of a connection another client owns (onboarding, a pipeline, the Authorizer). */
export const connectionTaken = (connectionId: string): string => `Connection ${connectionId} belongs to another client`;

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
  const row = db.statements.prepare('SELECT owner_client_id FROM connections WHERE manifest_key = ? AND owner_client_id IS NOT NULL LIMIT 1').get(key) as { owner_client_id: string | null } | undefined;
  return row?.owner_client_id ?? null;
}

/** The connections a client owns, not shared, with their manifest and stored secret reference. */
export function connectionsOwnedBy(db: Store, clientId: string): { connectionId: string; manifestKey: string | null; secretRef: string | null }[] {
  return (
    db.statements.prepare('SELECT connection_id, manifest_key, secret_ref FROM connections WHERE owner_client_id = ? AND shared = 0 ORDER BY connection_id').all(clientId) as {
      connection_id: string;
      manifest_key: string | null;
      secret_ref: string | null;
    }[]
  ).map((r) => ({ connectionId: r.connection_id, manifestKey: r.manifest_key, secretRef: r.secret_ref }));
}

/** Deletes a stored connection (its last test goes with it). */
export function deleteConnection(db: Store, connectionId: string): void {
  db.statements.prepare('DELETE FROM connections WHERE connection_id = ?').run(connectionId);
}
