import type { ClientDashboard, DashboardDataSource, DashboardLayout } from '../../generated/schema-types.ts';
import type { Store } from '../../store/db.ts';
import type { IdIssuer, Owner } from '../../contract.ts';
import { vdmOwner } from '../client/resources.ts';
import { connectionOwnership } from '../connection/store.ts';
import { fromJson, toJson } from '../json.ts';
import { buildSections, type NormalizedChart, type PreviousSection } from './charts.ts';
import { isSimpleMode, sectionsOf, type DashboardSpec } from './spec.ts';

/**
 * The facades and experiments tables: the one writer and the one reader of a dashboard,
 * whether it came from a Dashboard manifest (an import) or from a Client's onboarding package.
 */

export interface FacadeRow {
  facade_id: string;
  name: string;
  description: string;
  client_id: string | null;
  connection_id: string | null;
  vdm_id: string | null;
  manifest_key: string | null;
  position: number;
  definition: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

interface ExperimentRow {
  experiment_id: string;
  section: string;
  position: number;
  top_section: number;
  category: number;
  charts: string;
}

/** What `facades.definition` holds besides the facade's own columns: one shape for every dashboard. */
export interface FacadeDefinition {
  mode: 'simple' | 'sections';
  dataSource: DashboardDataSource;
  layout: DashboardLayout;
  templateType?: string;
  layoutTemplateName?: string;
  category: string[];
  tags: string[];
  isPublic: boolean;
  /** A dashboard of an onboarding package as the package gave it (defaults filled in): what export hands back. */
  package?: ClientDashboard;
}

const FACADE_COLUMNS =
  'facade_id, name, description, client_id, connection_id, vdm_id, manifest_key, position, definition, created_by, created_at, updated_at';
const SQL = {
  facade: `SELECT ${FACADE_COLUMNS} FROM facades WHERE facade_id = ?`,
  facadeByKey: `SELECT ${FACADE_COLUMNS} FROM facades WHERE manifest_key = ? ORDER BY position, facade_id LIMIT 1`,
  facadesOfClient: `SELECT ${FACADE_COLUMNS} FROM facades WHERE client_id = ? AND manifest_key = ? ORDER BY position, facade_id`,
  experiments: 'SELECT experiment_id, section, position, top_section, category, charts FROM experiments WHERE facade_id = ? ORDER BY position',
  insertFacade: `INSERT INTO facades (facade_id, name, description, client_id, connection_id, vdm_id, manifest_key, position, definition, created_by, created_at, updated_at)
    VALUES (@id, @name, @description, @clientId, @connectionId, @vdmId, @key, @position, @definition, @actor, @at, @at)`,
  updateFacade: `UPDATE facades SET name = @name, description = @description, client_id = @clientId, connection_id = @connectionId, vdm_id = @vdmId,
    manifest_key = @key, position = @position, definition = @definition, updated_at = @at WHERE facade_id = @id`,
  touchFacade: 'UPDATE facades SET updated_at = ? WHERE facade_id = ?',
  insertExperiment: `INSERT INTO experiments (experiment_id, facade_id, section, position, top_section, category, charts, created_at, updated_at)
    VALUES (@id, @facadeId, @section, @position, @topSection, @category, @charts, @at, @at)`,
  updateExperiment: `UPDATE experiments SET section = @section, position = @position, top_section = @topSection, category = @category,
    charts = @charts, updated_at = @at WHERE experiment_id = @id`,
  deleteExperiment: 'DELETE FROM experiments WHERE experiment_id = ?',
  deleteExperiments: 'DELETE FROM experiments WHERE facade_id = ?',
  deleteFacade: 'DELETE FROM facades WHERE facade_id = ?',
} as const;

export function readFacadeRow(db: Store, facadeId: string): FacadeRow | undefined {
  return db.statements.prepare<[string], FacadeRow>(SQL.facade).get(facadeId);
}

/** The facade a Dashboard manifest wrote (one per manifest). */
export function facadeRowOfManifest(db: Store, key: string): FacadeRow | undefined {
  return db.statements.prepare<[string], FacadeRow>(SQL.facadeByKey).get(key);
}

/** The facades a Client manifest wrote, in package order. */
export function facadeRowsOfClient(db: Store, clientId: string, key: string): FacadeRow[] {
  return db.statements.prepare<[string, string], FacadeRow>(SQL.facadesOfClient).all(clientId, key);
}

function experimentRows(db: Store, facadeId: string): ExperimentRow[] {
  return db.statements.prepare<[string], ExperimentRow>(SQL.experiments).all(facadeId);
}

/** `facades.definition` of a spec: everything the facade row has no column for. */
export function facadeDefinition(spec: DashboardSpec, pkg?: ClientDashboard): FacadeDefinition {
  const def: FacadeDefinition = {
    mode: isSimpleMode(spec) ? 'simple' : 'sections',
    dataSource: spec.dataSource,
    layout: spec.layout,
    category: spec.category ?? [],
    tags: spec.tags ?? [],
    isPublic: spec.isPublic,
  };
  if (spec.templateType !== undefined) def.templateType = spec.templateType;
  if (spec.layoutTemplateName !== undefined) def.layoutTemplateName = spec.layoutTemplateName;
  if (pkg !== undefined) def.package = pkg;
  return def;
}

export interface DashboardWrite {
  db: Store;
  ids: IdIssuer;
  at: string;
  /** The manifest the dashboard belongs to (`Dashboard/<name>` or `Client/<name>`). */
  key: string;
  actor: string;
  /** The dashboard, tags as they are to be stored. */
  spec: DashboardSpec;
  /** The facade this write updates in place (IDs stay); none creates one. */
  existing: FacadeRow | undefined;
  /** The owning client of an onboarding package's dashboard, and its place in the package. */
  clientId?: string;
  position?: number;
  /** The onboarding package's dashboard object, kept for export. */
  package?: ClientDashboard;
  /** Reports the step under way: `charts`, `facade`, `experiments`. */
  step?: (name: string) => void;
}

export interface DashboardWritten {
  facadeId: string;
  experimentIds: string[];
  changed: boolean;
}

/**
 * Writes one dashboard: its facade and one experiment per section, charts normalized. Runs in
 * the applier's transaction; updates in place (facade, experiment and chart IDs stay) and
 * writes nothing when nothing changed.
 */
export function writeDashboard(w: DashboardWrite): DashboardWritten {
  const { db, existing, spec, at } = w;
  const step = w.step ?? (() => {});
  const prevRows = existing ? experimentRows(db, existing.facade_id) : [];
  const previous: PreviousSection[] = prevRows.map((r) => ({
    experimentId: r.experiment_id,
    name: r.section,
    charts: fromJson<NormalizedChart[]>(r.charts, []),
  }));
  step('charts');
  const sections = buildSections(sectionsOf(spec), previous);
  step('facade');
  const facadeId = existing?.facade_id ?? w.ids.next('facade');
  const cols = {
    id: facadeId,
    name: spec.name,
    description: spec.description ?? '',
    clientId: w.clientId ?? null,
    connectionId: spec.dataSource.dbId,
    vdmId: spec.dataSource.vdmId ?? null,
    key: w.key,
    position: w.position ?? 0,
    definition: toJson(facadeDefinition(spec, w.package)),
    at,
  };
  let changed = false;
  let touched = false;
  if (!existing) {
    db.statements.prepare(SQL.insertFacade).run({ ...cols, actor: w.actor });
    changed = touched = true;
  } else if (
    existing.name !== cols.name ||
    existing.description !== cols.description ||
    existing.client_id !== cols.clientId ||
    existing.connection_id !== cols.connectionId ||
    existing.vdm_id !== cols.vdmId ||
    existing.manifest_key !== cols.key ||
    existing.position !== cols.position ||
    existing.definition !== cols.definition
  ) {
    db.statements.prepare(SQL.updateFacade).run(cols);
    changed = touched = true;
  }
  step('experiments');
  const byId = new Map(prevRows.map((r) => [r.experiment_id, r]));
  const experimentIds = sections.map((section, position) => {
    const row = {
      id: section.experimentId ?? w.ids.next('experiment'),
      facadeId,
      section: section.name,
      position,
      topSection: section.topSection ? 1 : 0,
      category: section.category ? 1 : 0,
      charts: toJson(section.charts),
      at,
    };
    const old = byId.get(row.id);
    byId.delete(row.id);
    if (!old) {
      db.statements.prepare(SQL.insertExperiment).run(row);
      changed = true;
    } else if (
      old.section !== row.section ||
      old.position !== position ||
      old.top_section !== row.topSection ||
      old.category !== row.category ||
      old.charts !== row.charts
    ) {
      db.statements.prepare(SQL.updateExperiment).run(row);
      changed = true;
    }
    return row.id;
  });
  for (const gone of byId.keys()) {
    db.statements.prepare(SQL.deleteExperiment).run(gone);
    changed = true;
  }
  if (existing && changed && !touched && existing.updated_at !== at) db.statements.prepare(SQL.touchFacade).run(at, facadeId);
  return { facadeId, experimentIds, changed };
}

/** Removes a dashboard: its experiments, then its facade. */
export function deleteDashboard(db: Store, facadeId: string): void {
  db.statements.prepare(SQL.deleteExperiments).run(facadeId);
  db.statements.prepare(SQL.deleteFacade).run(facadeId);
}

export interface StoredSection {
  experimentId: string;
  name: string;
  topSection: boolean;
  category: boolean;
  charts: NormalizedChart[];
}

/**
 * A stored dashboard as `GET /v1/sdk/dashboards/{facadeId}` shows it: the import payload with
 * every default applied and the IDs added, so the same JSON imports again.
 */
export interface DashboardView extends Omit<FacadeDefinition, 'mode' | 'package'> {
  facadeId: string;
  name: string;
  description: string;
  sections: StoredSection[];
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export function readDashboard(db: Store, facadeId: string): DashboardView | undefined {
  const row = readFacadeRow(db, facadeId);
  if (!row) return undefined;
  const def = fromJson<FacadeDefinition>(row.definition, {} as FacadeDefinition);
  const view: DashboardView = {
    facadeId: row.facade_id,
    name: row.name,
    description: row.description,
    dataSource: def.dataSource,
    layout: def.layout,
    category: def.category ?? [],
    tags: def.tags ?? [],
    isPublic: def.isPublic,
    sections: experimentRows(db, facadeId).map((e) => ({
      experimentId: e.experiment_id,
      name: e.section,
      topSection: e.top_section === 1,
      category: e.category === 1,
      charts: fromJson<NormalizedChart[]>(e.charts, []),
    })),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (def.templateType !== undefined) view.templateType = def.templateType;
  if (def.layoutTemplateName !== undefined) view.layoutTemplateName = def.layoutTemplateName;
  return view;
}

/** The 201 body's `experiments` (docs/contract/api.md §4.2) of a stored dashboard. */
export function importSummary(sections: readonly { experimentId: string; name: string; charts: readonly NormalizedChart[] }[]) {
  return sections.map((s) => ({
    experimentId: s.experimentId,
    section: s.name,
    charts: s.charts.map((c) => ({ chartId: c.chartId, chartType: c.type, chartTitle: c.title })),
  }));
}

/** A dashboard's stored owner: `undefined` no such dashboard, `null` it belongs to no client. */
export function dashboardOwner(db: Store, facadeId: string): Owner {
  const row = db.statements.prepare('SELECT owner_client_id FROM facades WHERE facade_id = ?').get(facadeId) as { owner_client_id: string | null } | undefined;
  return row ? row.owner_client_id : undefined;
}

/** The client owning the dashboard a manifest defines (null: none). */
export function dashboardManifestOwner(db: Store, key: string): string | null {
  const row = db.statements.prepare('SELECT owner_client_id FROM facades WHERE manifest_key = ? LIMIT 1').get(key) as { owner_client_id: string | null } | undefined;
  return row?.owner_client_id ?? null;
}

/** A standalone dashboard's owner: its connection's, or (on a shared connection) its VDM's client. */
export function ownerOfDashboard(db: Store, dataSource: { dbId: string; vdmId?: string }): string | null {
  const c = connectionOwnership(db, dataSource.dbId);
  if (c && !c.shared) return c.owner;
  return (dataSource.vdmId ? vdmOwner(db, dataSource.vdmId) : null) ?? null;
}

/** The client a dashboard manifest's dashboard belongs to: its owner, else the client whose package holds it (null: none). */
export function dashboardClientOfManifest(db: Store, key: string): string | null {
  const row = db.statements
    .prepare('SELECT COALESCE(owner_client_id, client_id) AS client FROM facades WHERE manifest_key = ? AND COALESCE(owner_client_id, client_id) IS NOT NULL LIMIT 1')
    .get(key) as { client: string } | undefined;
  return row?.client ?? null;
}

/** The dashboards on a connection, by name then ID. */
export function dashboardsOnConnection(db: Store, connectionId: string): { facadeId: string; name: string; clientId: string | null }[] {
  return (
    db.statements.prepare('SELECT facade_id, name, client_id FROM facades WHERE connection_id = ? ORDER BY name, facade_id').all(connectionId) as {
      facade_id: string;
      name: string;
      client_id: string | null;
    }[]
  ).map((r) => ({ facadeId: r.facade_id, name: r.name, clientId: r.client_id }));
}

/** The dashboards a client owns, by ID. */
export function dashboardIdsOwnedBy(db: Store, clientId: string): string[] {
  return (db.statements.prepare('SELECT facade_id FROM facades WHERE owner_client_id = ? ORDER BY facade_id').all(clientId) as { facade_id: string }[]).map((r) => r.facade_id);
}

/** The manifests of the dashboards a client owns (Dashboard manifests only). */
export function dashboardManifestsOwnedBy(db: Store, clientId: string): string[] {
  return (db.statements.prepare("SELECT manifest_key FROM facades WHERE owner_client_id = ? AND manifest_key LIKE 'Dashboard/%'").all(clientId) as { manifest_key: string }[]).map((r) => r.manifest_key);
}

/** Whether a dashboard of another owner than `owner` is on the connection. */
export function dashboardOfAnotherOwnerOn(db: Store, connectionId: string, owner: string): boolean {
  return db.statements.prepare('SELECT 1 FROM facades WHERE connection_id = ? AND owner_client_id IS NOT ? LIMIT 1').get(connectionId, owner) !== undefined;
}

/** Deletes the dashboards a client owns (their experiments go with them). */
export function deleteDashboardsOwnedBy(db: Store, clientId: string): void {
  db.statements.prepare('DELETE FROM facades WHERE owner_client_id = ?').run(clientId);
}
