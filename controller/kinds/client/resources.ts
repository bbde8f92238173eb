import type { Owner } from '../../contract.ts';
import type { Store } from '../../store/db.ts';
import { fromJson } from '../json.ts';
import { vdmFields } from '../dashboard/fields.ts';
import type { NormalizedChart } from '../dashboard/charts.ts';
import { readClient } from './registry.ts';
import type { ClientRefs } from './types.ts';
import { lastConnectionTest } from '../connection/tests.ts';
import type { ApiClientResources, ApiDashboardSummary, ApiOffboardPlan } from '../../generated/schema-types.ts';

/**
 * What a client has in the store, by name: its connection, model, VDMs with their columns,
 * dashboards with their sections and charts, and the pipelines it owns. The client page reads
 * it; `offboardPlan` says which of these the prune of its manifest removes.
 */

/** Shapes of the API's answers (schemas/api.schema.json). */
export type DashboardSummary = ApiDashboardSummary;
export type ClientResources = Pick<ApiClientResources, 'connection' | 'model' | 'vdms' | 'dashboards' | 'pipelines'>;

interface FacadeListRow {
  facade_id: string;
  name: string;
  description: string;
  owner_client_id: string | null;
  manifest_key: string | null;
  updated_at: string;
}

interface ExperimentListRow {
  facade_id: string;
  experiment_id: string;
  section: string;
  charts: string;
}

/** Dashboards with their sections and charts (titles and types only), `where` on the facades table. */
function dashboardSummaries(db: Store, where: string, args: unknown[]): DashboardSummary[] {
  const facades = db.statements
    .prepare(`SELECT facade_id, name, description, owner_client_id, manifest_key, updated_at FROM facades ${where} ORDER BY name, facade_id`)
    .all(...args) as FacadeListRow[];
  if (facades.length === 0) return [];
  const sections = new Map<string, DashboardSummary['sections']>();
  const experiments = db.statements
    .prepare(`SELECT facade_id, experiment_id, section, charts FROM experiments WHERE facade_id IN (SELECT facade_id FROM facades ${where}) ORDER BY facade_id, position`)
    .all(...args) as ExperimentListRow[];
  for (const e of experiments) {
    const charts = fromJson<NormalizedChart[]>(e.charts, []).map((c) => ({ chartId: c.chartId, title: c.title, type: c.type }));
    const list = sections.get(e.facade_id) ?? [];
    list.push({ experimentId: e.experiment_id, name: e.section, charts });
    sections.set(e.facade_id, list);
  }
  return facades.map((f) => ({
    facadeId: f.facade_id,
    name: f.name,
    description: f.description,
    owner: f.owner_client_id,
    manifestKey: f.manifest_key,
    sections: sections.get(f.facade_id) ?? [],
    updatedAt: f.updated_at,
  }));
}

/** Every dashboard of `owners` ('all': every dashboard), optionally of one client only. */
export function listDashboards(db: Store, owners: 'all' | readonly string[], clientId?: string): DashboardSummary[] {
  const clauses: string[] = [];
  const args: unknown[] = [];
  if (owners !== 'all') {
    if (owners.length === 0) return [];
    clauses.push(`owner_client_id IN (${owners.map(() => '?').join(', ')})`);
    args.push(...owners);
  }
  if (clientId !== undefined) {
    clauses.push('owner_client_id = ?');
    args.push(clientId);
  }
  return dashboardSummaries(db, clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', args);
}

export function clientResources(db: Store, clientId: string): ClientResources {
  const row = readClient(db, clientId);
  const connectionId = row?.connection_id ?? null;
  const conn = connectionId
    ? (db.statements.prepare('SELECT connection_id, name, vendor, shared, manifest_key FROM connections WHERE connection_id = ?').get(connectionId) as
        | { connection_id: string; name: string; vendor: string; shared: number; manifest_key: string | null }
        | undefined)
    : undefined;
  const model = row?.model_id
    ? (db.statements.prepare('SELECT model_id, name, core_model_id, security_enabled FROM semantic_models WHERE model_id = ?').get(row.model_id) as
        | { model_id: string; name: string; core_model_id: string; security_enabled: number }
        | undefined)
    : undefined;
  const vdms = db.statements
    .prepare('SELECT vdm_id, name, published, config FROM vdms WHERE client_id = ? ORDER BY position, vdm_id')
    .all(clientId) as { vdm_id: string; name: string; published: number; config: string }[];
  const pipelines = db.statements
    .prepare('SELECT pipeline_id, name, status, manifest_key FROM pipelines WHERE owner_client_id = ? ORDER BY name, pipeline_id')
    .all(clientId) as { pipeline_id: string; name: string; status: string; manifest_key: string | null }[];
  return {
    connection: conn
      ? { connectionId: conn.connection_id, name: conn.name, vendor: conn.vendor, shared: conn.shared === 1, manifestKey: conn.manifest_key, lastTest: lastConnectionTest(db, conn.connection_id) }
      : null,
    model: model ? { modelId: model.model_id, name: model.name, coreModelId: model.core_model_id, securityEnabled: model.security_enabled === 1 } : null,
    vdms: vdms.map((v) => {
      const fields = vdmFields(fromJson<Record<string, unknown>>(v.config, {}));
      return { vdmId: v.vdm_id, name: v.name, published: v.published === 1, columns: [...fields.columns], calculations: [...fields.calculations] };
    }),
    dashboards: listDashboards(db, 'all', clientId),
    pipelines: pipelines.map((p) => ({ pipelineId: p.pipeline_id, name: p.name, status: p.status, manifestKey: p.manifest_key })),
  };
}

/** What withdrawing a Client manifest prunes (the Client applier's `pruneClient`), and what stays. */
export type OffboardPlan = ApiOffboardPlan;

/**
 * The prune of `Client/<ID>` removes the facades and the model (its VDMs cascade) its manifest
 * wrote, and the connection its onboarding created unless something outside it still uses it.
 */
export function offboardPlan(db: Store, key: string, path: string | null, refs: Partial<ClientRefs>, resources: ClientResources): OffboardPlan {
  const clientId = refs.clientId ?? key.slice(key.indexOf('/') + 1);
  const removed = new Set(resources.dashboards.filter((d) => d.manifestKey === key).map((d) => d.facadeId));
  const model = db.statements.prepare('SELECT model_id FROM semantic_models WHERE client_id = ? AND manifest_key = ?').all(clientId, key) as { model_id: string }[];
  const modelIds = new Set(model.map((m) => m.model_id));
  const vdmIds = (db.statements.prepare('SELECT vdm_id, model_id FROM vdms WHERE client_id = ?').all(clientId) as { vdm_id: string; model_id: string }[])
    .filter((v) => modelIds.has(v.model_id))
    .map((v) => v.vdm_id);
  let connectionGoes = false;
  const connectionId = refs.connectionId ?? resources.connection?.connectionId ?? null;
  if (refs.connectionCreated && connectionId) {
    const removedVdms = new Set(vdmIds);
    const users = db.statements
      .prepare('SELECT vdm_id AS id, 0 AS facade FROM vdms WHERE connection_id = ? UNION ALL SELECT facade_id AS id, 1 AS facade FROM facades WHERE connection_id = ?')
      .all(connectionId, connectionId) as { id: string; facade: number }[];
    const owner = db.statements.prepare('SELECT manifest_key FROM connections WHERE connection_id = ?').get(connectionId) as { manifest_key: string | null } | undefined;
    connectionGoes = owner?.manifest_key === key && users.every((u) => (u.facade ? removed.has(u.id) : removedVdms.has(u.id)));
  }
  return {
    manifestKey: key,
    path,
    removes: {
      client: clientId,
      connectionId: connectionGoes ? connectionId : null,
      modelId: model[0]?.model_id ?? null,
      vdmIds,
      facadeIds: [...removed],
    },
    keeps: {
      connectionId: connectionGoes ? null : connectionId,
      pipelineIds: resources.pipelines.map((p) => p.pipelineId),
      facadeIds: resources.dashboards.filter((d) => !removed.has(d.facadeId)).map((d) => d.facadeId),
    },
  };
}

/** The client a VDM belongs to (undefined: no such VDM). */
export function vdmOwner(db: Store, vdmId: string): Owner {
  return (db.statements.prepare('SELECT client_id FROM vdms WHERE vdm_id = ?').get(vdmId) as { client_id: string } | undefined)?.client_id;
}

/** The VDMs on each connection, in each client's order. */
export function vdmsByConnection(db: Store): Map<string, { vdmId: string; name: string; clientId: string }[]> {
  const out = new Map<string, { vdmId: string; name: string; clientId: string }[]>();
  const rows = db.statements.prepare('SELECT vdm_id, name, client_id, connection_id FROM vdms ORDER BY client_id, position').all() as {
    vdm_id: string;
    name: string;
    client_id: string;
    connection_id: string;
  }[];
  for (const r of rows) {
    const vdm = { vdmId: r.vdm_id, name: r.name, clientId: r.client_id };
    const list = out.get(r.connection_id);
    if (list) list.push(vdm);
    else out.set(r.connection_id, [vdm]);
  }
  return out;
}

/** A client's semantic models and VDMs, by ID. */
export function modelsOf(db: Store, clientId: string): { models: string[]; vdms: string[] } {
  const ids = (sql: string, col: string) => (db.statements.prepare(sql).all(clientId) as Record<string, string>[]).map((r) => r[col]);
  return {
    models: ids('SELECT model_id FROM semantic_models WHERE client_id = ? ORDER BY model_id', 'model_id'),
    vdms: ids('SELECT vdm_id FROM vdms WHERE client_id = ? ORDER BY vdm_id', 'vdm_id'),
  };
}

/** Whether a VDM of another client than `owner` is on the connection. */
export function vdmOfAnotherClientOn(db: Store, connectionId: string, owner: string): boolean {
  return db.statements.prepare('SELECT 1 FROM vdms WHERE connection_id = ? AND client_id IS NOT ? LIMIT 1').get(connectionId, owner) !== undefined;
}

/** Deletes a client's VDMs and semantic models. */
export function deleteModelsOf(db: Store, clientId: string): void {
  db.statements.prepare('DELETE FROM vdms WHERE client_id = ?').run(clientId);
  db.statements.prepare('DELETE FROM semantic_models WHERE client_id = ?').run(clientId);
}
