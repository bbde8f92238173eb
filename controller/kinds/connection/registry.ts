import type { ApiConnectionSummary } from '../../generated/schema-types.ts';
import { postgresEndpoint, snowflakeAccessUrl } from '../../lib/endpoints.ts';
import type { Store } from '../../store/db.ts';
import { clientsByConnection } from '../client/registry.ts';
import { vdmsByConnection } from '../client/resources.ts';
import { pipelinesByConnection } from '../pipeline/store.ts';
import type { ConnectionRow } from './store.ts';
import { lastTestOf, type TestColumns } from './tests.ts';

/** A stored connection as the settings UI lists it: where it points, never a credential (schemas/api.schema.json). */
export type ConnectionSummary = ApiConnectionSummary;
type UsedBy = ConnectionSummary['usedBy'];

interface Row extends ConnectionRow, TestColumns {
  name: string;
  manifest_key: string | null;
  owner_client_id: string | null;
  shared: number;
}

const SELECT = `SELECT c.connection_id, c.name, c.vendor, c.account_url, c.warehouse, c.database_name, c.schema_name, c.username,
  c.password_env, c.secret_ref, c.manifest_key, c.owner_client_id, c.shared, t.tested_at, t.ok, t.message, t.duration_ms, t.tested_by
  FROM connections c LEFT JOIN connection_tests t ON t.connection_id = c.connection_id`;

/** Host and port a connection points at: the PostgreSQL endpoint, or the Snowflake account host. */
function endpointOf(row: Row): { host: string | null; port: number | null } {
  if (!row.account_url) return { host: null, port: null };
  if (row.vendor === 'POSTGRESQL') {
    const e = postgresEndpoint({ vendor: 'POSTGRESQL', accountUrl: row.account_url });
    return e ? { host: e.host, port: e.port } : { host: null, port: null };
  }
  const url = snowflakeAccessUrl(row.account_url);
  return { host: url ? new URL(url).host : row.account_url, port: null };
}

/** Every connection each client, VDM and pipeline links to, built once per listing (each kind reads its own tables). */
function usage(db: Store): (connectionId: string) => UsedBy {
  const clients = clientsByConnection(db);
  const vdms = vdmsByConnection(db);
  const pipelines = pipelinesByConnection(db);
  return (connectionId) => ({ clients: clients.get(connectionId) ?? [], vdms: vdms.get(connectionId) ?? [], pipelines: pipelines.get(connectionId) ?? [] });
}

function toSummary(row: Row, usedBy: UsedBy): ConnectionSummary {
  return {
    connectionId: row.connection_id,
    name: row.name,
    vendor: row.vendor,
    ...endpointOf(row),
    database: row.database_name,
    schema: row.schema_name,
    warehouse: row.warehouse,
    username: row.username,
    credential: row.secret_ref ? 'secret' : row.password_env ? 'passwordEnv' : 'none',
    owner: row.owner_client_id,
    shared: row.shared === 1,
    manifestKey: row.manifest_key,
    lastTest: lastTestOf(row),
    usedBy,
  };
}

/** Every stored connection, by name then ID, with its last test and what uses it. */
export function listConnections(db: Store): ConnectionSummary[] {
  const usedBy = usage(db);
  return (db.prepare(`${SELECT} ORDER BY c.name COLLATE NOCASE, c.connection_id`).all() as Row[]).map((r) => toSummary(r, usedBy(r.connection_id)));
}

export function readConnectionSummary(db: Store, connectionId: string): ConnectionSummary | undefined {
  const row = db.prepare(`${SELECT} WHERE c.connection_id = ?`).get(connectionId) as Row | undefined;
  return row && toSummary(row, usage(db)(connectionId));
}
