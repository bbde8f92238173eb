import type { Database, Statement } from 'better-sqlite3';
import { fromJson } from '../json.ts';
import type { NormalizedChart } from './charts.ts';
import type { DashboardSpec } from './spec.ts';

export interface FacadeRow {
  facade_id: string;
  name: string;
  description: string;
  connection_id: string | null;
  vdm_id: string | null;
  manifest_key: string | null;
  definition: string;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface ExperimentRow {
  experiment_id: string;
  section: string;
  position: number;
  top_section: number;
  category: number;
  charts: string;
}

/** What `facades.definition` holds besides the facade's own columns. */
export interface FacadeDefinition {
  mode: 'simple' | 'sections';
  dataSource: DashboardSpec['dataSource'];
  layout: DashboardSpec['layout'];
  templateType?: string;
  layoutTemplateName?: string;
  category: string[];
  tags: string[];
  isPublic: boolean;
}

export interface DashboardStatements {
  facade: Statement<[string], FacadeRow>;
  facadeByKey: Statement<[string], FacadeRow>;
  experiments: Statement<[string], ExperimentRow>;
  insertFacade: Statement;
  updateFacade: Statement;
  touchFacade: Statement;
  insertExperiment: Statement;
  updateExperiment: Statement;
  deleteExperiment: Statement;
  deleteExperiments: Statement;
  deleteFacade: Statement;
}

const FACADE_COLUMNS = 'facade_id, name, description, connection_id, vdm_id, manifest_key, definition, created_by, created_at, updated_at';
const cache = new WeakMap<Database, DashboardStatements>();

/** Prepared once per store: the apply path runs them for every import. */
export function dashboardStatements(db: Database): DashboardStatements {
  let s = cache.get(db);
  if (s) return s;
  s = {
    facade: db.prepare(`SELECT ${FACADE_COLUMNS} FROM facades WHERE facade_id = ?`),
    facadeByKey: db.prepare(`SELECT ${FACADE_COLUMNS} FROM facades WHERE manifest_key = ? LIMIT 1`),
    experiments: db.prepare(
      'SELECT experiment_id, section, position, top_section, category, charts FROM experiments WHERE facade_id = ? ORDER BY position',
    ),
    insertFacade: db.prepare(
      `INSERT INTO facades (facade_id, name, description, connection_id, vdm_id, manifest_key, position, definition, created_by, created_at, updated_at)
       VALUES (@id, @name, @description, @connectionId, @vdmId, @key, 0, @definition, @actor, @at, @at)`,
    ),
    updateFacade: db.prepare(
      `UPDATE facades SET name = @name, description = @description, connection_id = @connectionId, vdm_id = @vdmId,
       manifest_key = @key, definition = @definition, updated_at = @at WHERE facade_id = @id`,
    ),
    touchFacade: db.prepare('UPDATE facades SET updated_at = ? WHERE facade_id = ?'),
    insertExperiment: db.prepare(
      `INSERT INTO experiments (experiment_id, facade_id, section, position, top_section, category, charts, created_at, updated_at)
       VALUES (@id, @facadeId, @section, @position, @topSection, @category, @charts, @at, @at)`,
    ),
    updateExperiment: db.prepare(
      `UPDATE experiments SET section = @section, position = @position, top_section = @topSection, category = @category,
       charts = @charts, updated_at = @at WHERE experiment_id = @id`,
    ),
    deleteExperiment: db.prepare('DELETE FROM experiments WHERE experiment_id = ?'),
    deleteExperiments: db.prepare('DELETE FROM experiments WHERE facade_id = ?'),
    deleteFacade: db.prepare('DELETE FROM facades WHERE facade_id = ?'),
  };
  cache.set(db, s);
  return s;
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
export interface DashboardView extends Omit<FacadeDefinition, 'mode'> {
  facadeId: string;
  name: string;
  description: string;
  sections: StoredSection[];
  createdBy: string | null;
  createdAt: string;
  updatedAt: string;
}

export function readDashboard(db: Database, facadeId: string): DashboardView | undefined {
  const s = dashboardStatements(db);
  const row = s.facade.get(facadeId);
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
    sections: s.experiments.all(facadeId).map((e) => ({
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

/** The 201 body's `experiments` (spec 4.2) of a stored dashboard. */
export function importSummary(sections: readonly { experimentId: string; name: string; charts: readonly NormalizedChart[] }[]) {
  return sections.map((s) => ({
    experimentId: s.experimentId,
    section: s.name,
    charts: s.charts.map((c) => ({ chartId: c.chartId, chartType: c.type, chartTitle: c.title })),
  }));
}
