import type { ApiClientDetail, ApiListedClient, ApiOnboardedClient } from '../../generated/schema-types.ts';
import type { ClientHold } from '../../contract.ts';
import type { Store } from '../../store/db.ts';
import { fromJson } from '../json.ts';
import type { ClientStatus } from './types.ts';

/** One row of the `clients` table (the registry of docs/contract/api.md §2.2). */
export interface ClientRow {
  client_id: string;
  client_name: string;
  description: string;
  connection_id: string | null;
  model_id: string | null;
  vdm_ids: string;
  facade_ids: string;
  experiment_ids: string;
  core_model_id: string | null;
  status: ClientStatus;
  onboarded_by: string | null;
  onboarded_date: string;
  last_modified_date: string;
  is_active: number;
  is_deleted: number;
  failed_step: string | null;
  failure_reason: string | null;
  manifest_key: string | null;
  /** OFFBOARDED only: when the client may be purged. */
  retain_until: string | null;
}

export const CLIENT_COLUMNS =
  'client_id, client_name, description, connection_id, model_id, vdm_ids, facade_ids, experiment_ids, core_model_id, status, ' +
  'onboarded_by, onboarded_date, last_modified_date, is_active, is_deleted, failed_step, failure_reason, manifest_key, retain_until';

export function readClient(db: Store, clientId: string): ClientRow | undefined {
  return db.statements.prepare(`SELECT ${CLIENT_COLUMNS} FROM clients WHERE client_id = ?`).get(clientId) as ClientRow | undefined;
}

/** Writes a whole registry row (insert or replace by clientId). */
export function upsertClient(db: Store, row: ClientRow): void {
  const cols = CLIENT_COLUMNS.split(', ');
  db.statements.prepare(
    `INSERT INTO clients (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})
     ON CONFLICT (client_id) DO UPDATE SET ${cols
       .filter((c) => c !== 'client_id')
       .map((c) => `${c} = excluded.${c}`)
       .join(', ')}`,
  ).run(row);
}

/** The `client` object of the onboarding response (docs/contract/api.md §4.1), exactly these fields. */
export type OnboardedClient = ApiOnboardedClient;

export function onboardView(r: ClientRow): OnboardedClient {
  return {
    clientId: r.client_id,
    clientName: r.client_name,
    connectionId: r.connection_id,
    modelId: r.model_id,
    vdmIds: fromJson<string[]>(r.vdm_ids, []),
    facadeIds: fromJson<string[]>(r.facade_ids, []),
    experimentIds: fromJson<string[]>(r.experiment_ids, []),
    coreModelId: r.core_model_id,
    status: r.status,
    onboardedBy: r.onboarded_by,
    onboardedDate: r.onboarded_date,
  };
}

/** A record of the client listing (docs/contract/api.md §4.5), exactly these fields. */
export type ListedClient = ApiListedClient;

export function listView(r: ClientRow): ListedClient {
  return {
    clientId: r.client_id,
    clientName: r.client_name,
    dbId: r.connection_id,
    modelId: r.model_id,
    vdmId: fromJson<string[]>(r.vdm_ids, [])[0] ?? null,
    facadeId: fromJson<string[]>(r.facade_ids, [])[0] ?? null,
    experimentIds: fromJson<string[]>(r.experiment_ids, []),
    coreModelId: r.core_model_id,
    status: r.status,
    onboardedBy: r.onboarded_by,
    onboardedDate: r.onboarded_date,
    ...retainUntilOf(r),
  };
}

/** `retainUntil` of an OFFBOARDED client (absent for the other states: the spec's fields stay as they were). */
function retainUntilOf(r: ClientRow): { retainUntil?: string } {
  return r.status === 'OFFBOARDED' && r.retain_until ? { retainUntil: r.retain_until } : {};
}

/** The single read (docs/contract/api.md §4.6): every single-read field of 2.2; a FAILED entry also says where it failed. */
export type ClientDetail = ApiClientDetail;

export function detailView(r: ClientRow): ClientDetail {
  return {
    ...listView(r),
    description: r.description,
    lastModifiedDate: r.last_modified_date,
    isActive: r.is_active === 1,
    isDeleted: r.is_deleted === 1,
    ...(r.status === 'FAILED' ? { failedStep: r.failed_step ?? undefined, failureReason: r.failure_reason ?? undefined } : {}),
  };
}

const HOLDS: Readonly<Record<string, ClientHold>> = { SUSPENDED: 'suspended', OFFBOARDED: 'offboarded' };

/**
 * The hold on `clientId`, or undefined when its tenant may act (one primary-key read). Its keys
 * and members are refused its data and writes, and its runs are refused, while registry and
 * status reads still show it.
 */
export function clientHold(db: Store, clientId: string): ClientHold | undefined {
  const row = db.statements.prepare('SELECT status FROM clients WHERE client_id = ?').get(clientId) as { status: string } | undefined;
  return row ? HOLDS[row.status] : undefined;
}

/** The client ID a Client manifest onboarded (undefined: none stored). */
export function clientIdOfManifest(db: Store, key: string): string | undefined {
  return (db.statements.prepare('SELECT client_id FROM clients WHERE manifest_key = ?').get(key) as { client_id: string } | undefined)?.client_id;
}

/** The clients (not DELETED) on each connection, by client ID. */
export function clientsByConnection(db: Store): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const rows = db.statements
    .prepare("SELECT client_id, connection_id FROM clients WHERE connection_id IS NOT NULL AND status <> 'DELETED' ORDER BY client_id")
    .all() as { client_id: string; connection_id: string }[];
  for (const r of rows) {
    const list = out.get(r.connection_id);
    if (list) list.push(r.client_id);
    else out.set(r.connection_id, [r.client_id]);
  }
  return out;
}

/** Whether an ACTIVE client is on the connection. */
export function activeClientOn(db: Store, connectionId: string): boolean {
  return db.statements.prepare("SELECT 1 FROM clients WHERE connection_id = ? AND status = 'ACTIVE' LIMIT 1").get(connectionId) !== undefined;
}

/** OFFBOARDED clients whose retention ended at `nowIso` or before, by client ID. */
export function clientsDueForPurge(db: Store, nowIso: string): { clientId: string; retainUntil: string }[] {
  return (
    db.statements.prepare("SELECT client_id, retain_until FROM clients WHERE status = 'OFFBOARDED' AND retain_until <= ? ORDER BY client_id").all(nowIso) as {
      client_id: string;
      retain_until: string;
    }[]
  ).map((r) => ({ clientId: r.client_id, retainUntil: r.retain_until }));
}

/** How many OFFBOARDED clients' retention ended at `nowIso` or before. */
export function countDueForPurge(db: Store, nowIso: string): number {
  return (db.statements.prepare("SELECT COUNT(*) AS n FROM clients WHERE status = 'OFFBOARDED' AND retain_until <= ?").get(nowIso) as { n: number }).n;
}

/** The registry record of a purged client: DELETED, kept as the record that it existed. */
export function markPurged(db: Store, clientId: string, atIso: string): void {
  db.statements
    .prepare("UPDATE clients SET status = 'DELETED', is_active = 0, is_deleted = 1, retain_until = NULL, last_modified_date = ? WHERE client_id = ?")
    .run(atIso, clientId);
}
