import type { ApiConnectionSummary } from '../generated/schema-types.ts';
import type { ConnectionRow } from '../kinds/connection/store.ts';
import { lastTestOf, type TestColumns } from '../kinds/connection/tests.ts';
import type { Store } from '../store/db.ts';
import { postgresEndpoint, snowflakeAccessUrl } from './test-connection.ts';

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

/** Every connection each client, VDM and pipeline links to, built once per listing. */
function usage(db: Store): (connectionId: string) => UsedBy {
  const clients = new Map<string, string[]>();
  for (const r of db.prepare("SELECT client_id, connection_id FROM clients WHERE connection_id IS NOT NULL AND status <> 'DELETED' ORDER BY client_id").all() as {
    client_id: string;
    connection_id: string;
  }[]) {
    const list = clients.get(r.connection_id);
    if (list) list.push(r.client_id);
    else clients.set(r.connection_id, [r.client_id]);
  }
  const vdms = new Map<string, UsedBy['vdms']>();
  for (const r of db.prepare('SELECT vdm_id, name, client_id, connection_id FROM vdms ORDER BY client_id, position').all() as {
    vdm_id: string;
    name: string;
    client_id: string;
    connection_id: string;
  }[]) {
    const vdm = { vdmId: r.vdm_id, name: r.name, clientId: r.client_id };
    const list = vdms.get(r.connection_id);
    if (list) list.push(vdm);
    else vdms.set(r.connection_id, [vdm]);
  }
  const pipelines = new Map<string, Map<string, string>>();
  const link = (connectionId: unknown, pipelineId: string, name: string) => {
    if (typeof connectionId !== 'string' || !connectionId) return;
    const m = pipelines.get(connectionId) ?? new Map<string, string>();
    m.set(pipelineId, name);
    pipelines.set(connectionId, m);
  };
  const rows = db
    .prepare(
      `SELECT p.pipeline_id, p.name, json_extract(p.source, '$.connectionId') AS connection_id FROM pipelines p
       UNION SELECT p.pipeline_id, p.name, json_extract(p.destination, '$.connectionId') FROM pipelines p
       UNION SELECT p.pipeline_id, p.name, json_extract(s.config, '$.connectionId') FROM pipeline_steps s JOIN pipelines p ON p.pipeline_id = s.pipeline_id
       ORDER BY 2, 1`,
    )
    .all() as { pipeline_id: string; name: string; connection_id: unknown }[];
  for (const r of rows) link(r.connection_id, r.pipeline_id, r.name);
  return (connectionId) => ({
    clients: clients.get(connectionId) ?? [],
    vdms: vdms.get(connectionId) ?? [],
    pipelines: [...(pipelines.get(connectionId) ?? new Map<string, string>())].map(([pipelineId, name]) => ({ pipelineId, name })),
  });
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
