import type { Database } from 'better-sqlite3';
import { formatProblem, StepError } from '../../errors.ts';
import type { IdAllocator } from '../../store/ids.ts';
import { buildSections, validateSections, type NormalizedChart, type PreviousSection, type SectionInput } from '../dashboard/charts.ts';
import { vdmFields } from '../dashboard/fields.ts';
import { bit, fromJson, toJson } from '../json.ts';
import { matchByNameThenPosition } from './match.ts';
import { sectionName } from './rules.ts';
import type { ClientDashboardSpec, VdmSpec } from './types.ts';

export const DEPLOY_STEP = 'deploy dashboard';

/** What the facade's `definition` column keeps for a dashboard of an onboarding package. */
export interface FacadeDefinition {
  /** `layoutTemplateName` when given, else `templateType`. */
  layoutTemplate: string | null;
  templateType: string | null;
  layoutTemplateName: string | null;
  category: unknown[];
  tags: string[];
  /** The dashboard object as the package gave it: what export hands back. */
  package: ClientDashboardSpec;
}

export interface DeployInput {
  db: Database;
  ids: IdAllocator;
  at: string;
  key: string;
  actor: string;
  clientId: string;
  connectionId: string;
  /** The client's first VDM: its ID and configuration (charts are checked against its fields). */
  firstVdm: { id: string; spec: VdmSpec };
  dashboards: readonly ClientDashboardSpec[];
}

export interface DeployResult {
  facadeIds: string[];
  experimentIds: string[];
  changed: boolean;
}

interface FacadeRow {
  facade_id: string;
  name: string;
  description: string;
  connection_id: string | null;
  vdm_id: string | null;
  position: number;
  definition: string;
}

interface ExperimentRow {
  experiment_id: string;
  section: string;
  position: number;
  top_section: number;
  category: number;
  charts: string;
}

/** Every chart problem of the package's dashboards against the first VDM's fields. */
export function dashboardProblems(dashboards: readonly ClientDashboardSpec[], firstVdm: VdmSpec): string[] {
  const catalog = vdmFields(firstVdm);
  return dashboards.flatMap((d, i) => validateSections(d.sections, catalog, `dashboards[${i}].sections`).map(formatProblem));
}

/**
 * Step 4: one facade per dashboard, one experiment per section, charts normalized by the
 * dashboard kind's own code. Facades and experiments keep their IDs (matched by name, then
 * position); those no longer in the package are removed.
 */
export function deployDashboards(input: DeployInput): DeployResult {
  const { db, ids, at, key, clientId } = input;
  const problems = dashboardProblems(input.dashboards, input.firstVdm.spec);
  if (problems.length) throw new StepError(DEPLOY_STEP, problems.join('; '));
  const existing = db
    .prepare(
      `SELECT facade_id, name, description, connection_id, vdm_id, position, definition FROM facades
       WHERE client_id = ? AND manifest_key = ? ORDER BY position, facade_id`,
    )
    .all(clientId, key) as FacadeRow[];
  const matched = matchByNameThenPosition(existing, input.dashboards.map((d) => d.name));
  const facadeIds: string[] = [];
  const experimentIds: string[] = [];
  let changed = false;
  input.dashboards.forEach((d, position) => {
    const prev = matched.matches[position];
    const facadeId = prev?.facade_id ?? ids.next('facade');
    const definition = toJson({
      layoutTemplate: d.layoutTemplateName ?? d.templateType ?? null,
      templateType: d.templateType ?? null,
      layoutTemplateName: d.layoutTemplateName ?? null,
      category: d.category ?? [],
      tags: d.tags ?? [],
      package: d,
    } satisfies FacadeDefinition);
    const cols = {
      id: facadeId,
      name: d.name,
      description: d.description ?? '',
      client_id: clientId,
      connection_id: input.connectionId,
      vdm_id: input.firstVdm.id,
      key,
      position,
      definition,
      actor: input.actor,
      at,
    };
    if (!prev) {
      db.prepare(
        `INSERT INTO facades (facade_id, name, description, client_id, connection_id, vdm_id, manifest_key, position, definition, created_by, created_at, updated_at)
         VALUES (@id, @name, @description, @client_id, @connection_id, @vdm_id, @key, @position, @definition, @actor, @at, @at)`,
      ).run(cols);
      changed = true;
    } else if (
      prev.name !== cols.name ||
      prev.description !== cols.description ||
      prev.connection_id !== cols.connection_id ||
      prev.vdm_id !== cols.vdm_id ||
      prev.position !== position ||
      prev.definition !== definition
    ) {
      db.prepare(
        `UPDATE facades SET name = @name, description = @description, connection_id = @connection_id, vdm_id = @vdm_id,
           position = @position, definition = @definition, updated_at = @at WHERE facade_id = @id`,
      ).run(cols);
      changed = true;
    }
    const sections = deploySections(db, ids, facadeId, d, at);
    changed ||= sections.changed;
    facadeIds.push(facadeId);
    experimentIds.push(...sections.experimentIds);
  });
  for (const gone of matched.unmatched) {
    db.prepare('DELETE FROM facades WHERE facade_id = ?').run(gone.facade_id);
    changed = true;
  }
  return { facadeIds, experimentIds, changed };
}

function deploySections(db: Database, ids: IdAllocator, facadeId: string, d: ClientDashboardSpec, at: string): { experimentIds: string[]; changed: boolean } {
  const existing = db
    .prepare('SELECT experiment_id, section, position, top_section, category, charts FROM experiments WHERE facade_id = ? ORDER BY position')
    .all(facadeId) as ExperimentRow[];
  const previous: PreviousSection[] = existing.map((e) => ({
    experimentId: e.experiment_id,
    name: e.section,
    charts: fromJson<NormalizedChart[]>(e.charts, []).map((c) => ({ chartId: c.chartId, title: c.title })),
  }));
  const inputs: SectionInput[] = d.sections.map((s, i) => ({
    ...s,
    name: sectionName(s.name, i),
    charts: s.charts as unknown as SectionInput['charts'],
  }));
  const built = buildSections(inputs, previous);
  const byId = new Map(existing.map((e) => [e.experiment_id, e]));
  const kept = new Set<string>();
  let changed = false;
  const experimentIds = built.map((section, position) => {
    const prev = section.experimentId ? byId.get(section.experimentId) : undefined;
    const id = prev?.experiment_id ?? ids.next('experiment');
    kept.add(id);
    const cols = {
      id,
      facadeId,
      section: section.name,
      position,
      top: bit(section.topSection),
      category: bit(section.category),
      charts: toJson(section.charts),
      at,
    };
    if (!prev) {
      db.prepare(
        `INSERT INTO experiments (experiment_id, facade_id, section, position, top_section, category, charts, created_at, updated_at)
         VALUES (@id, @facadeId, @section, @position, @top, @category, @charts, @at, @at)`,
      ).run(cols);
      changed = true;
    } else if (
      prev.section !== cols.section ||
      prev.position !== position ||
      prev.top_section !== cols.top ||
      prev.category !== cols.category ||
      prev.charts !== cols.charts
    ) {
      db.prepare(
        `UPDATE experiments SET section = @section, position = @position, top_section = @top, category = @category,
           charts = @charts, updated_at = @at WHERE experiment_id = @id`,
      ).run(cols);
      changed = true;
    }
    return id;
  });
  for (const e of existing) {
    if (kept.has(e.experiment_id)) continue;
    db.prepare('DELETE FROM experiments WHERE experiment_id = ?').run(e.experiment_id);
    changed = true;
  }
  return { experimentIds, changed };
}
