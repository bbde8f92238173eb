import { formatProblem, StepError } from '../../errors.ts';
import { DATA_SOURCE_DEFAULTS, IS_PUBLIC_DEFAULT, LAYOUT_DEFAULTS } from '../../generated/schema-constants.ts';
import type { Store } from '../../store/db.ts';
import type { IdIssuer } from '../../contract.ts';
import { validateSections } from '../dashboard/charts.ts';
import { vdmFields } from '../dashboard/fields.ts';
import type { DashboardSpec } from '../dashboard/spec.ts';
import { deleteDashboard, facadeRowsOfClient, writeDashboard } from '../dashboard/store.ts';
import { matchByNameThenPosition } from './match.ts';
import { sectionName } from './rules.ts';
import type { ClientDashboardSpec, VdmSpec } from './types.ts';

export const DEPLOY_STEP = 'deploy dashboard';

export interface DeployInput {
  db: Store;
  ids: IdIssuer;
  at: string;
  key: string;
  actor: string;
  clientId: string;
  connectionId: string;
  /** The client's first VDM: its ID and configuration (charts are checked against its fields). */
  firstVdm: { id: string; spec: VdmSpec };
  dashboards: readonly ClientDashboardSpec[];
  /** The core model's declared column types (a measure's aggregation is checked against them). */
  columnTypes?: ReadonlyMap<string, string>;
}

export interface DeployResult {
  facadeIds: string[];
  experimentIds: string[];
  changed: boolean;
}

/** Every chart problem of the package's dashboards against the first VDM's fields. */
function dashboardProblems(dashboards: readonly ClientDashboardSpec[], firstVdm: VdmSpec, columnTypes?: ReadonlyMap<string, string>): string[] {
  const catalog = vdmFields(firstVdm, columnTypes);
  return dashboards.flatMap((d, i) => validateSections(d.sections, catalog, `dashboards[${i}].sections`).map(formatProblem));
}

/**
 * A dashboard of an onboarding package as a Dashboard spec (the import payload, defaults
 * applied) on the client's connection and first VDM: stored, read and exported like any other.
 */
export function asDashboardSpec(d: ClientDashboardSpec, dataSource: { dbId: string; vdmId: string }): DashboardSpec {
  const spec: DashboardSpec = {
    name: d.name,
    dataSource: { ...dataSource, ...DATA_SOURCE_DEFAULTS },
    sections: d.sections.map((s, i) => ({ name: sectionName(s.name, i), charts: s.charts, topSection: s.topSection, category: s.category })),
    layout: { ...LAYOUT_DEFAULTS },
    category: (d.category ?? []).filter((c): c is string => typeof c === 'string'),
    tags: d.tags ?? [],
    isPublic: IS_PUBLIC_DEFAULT,
  };
  if (d.description !== undefined) spec.description = d.description;
  if (d.templateType !== undefined) spec.templateType = d.templateType;
  if (d.layoutTemplateName !== undefined) spec.layoutTemplateName = d.layoutTemplateName;
  return spec;
}

/**
 * Step 4: one facade per dashboard, one experiment per section, written by the dashboard
 * kind's own writer. Facades keep their IDs (matched by name, then position); those no longer
 * in the package are removed.
 */
export function deployDashboards(input: DeployInput): DeployResult {
  const { db, clientId, key } = input;
  const problems = dashboardProblems(input.dashboards, input.firstVdm.spec, input.columnTypes);
  if (problems.length) throw new StepError(DEPLOY_STEP, problems.join('; '));
  const matched = matchByNameThenPosition(facadeRowsOfClient(db, clientId, key), input.dashboards.map((d) => d.name));
  const facadeIds: string[] = [];
  const experimentIds: string[] = [];
  let changed = false;
  input.dashboards.forEach((d, position) => {
    const written = writeDashboard({
      db,
      ids: input.ids,
      at: input.at,
      key,
      actor: input.actor,
      spec: asDashboardSpec(d, { dbId: input.connectionId, vdmId: input.firstVdm.id }),
      existing: matched.matches[position],
      clientId,
      position,
      package: d,
    });
    changed ||= written.changed;
    facadeIds.push(written.facadeId);
    experimentIds.push(...written.experimentIds);
  });
  for (const gone of matched.unmatched) {
    deleteDashboard(db, gone.facade_id);
    changed = true;
  }
  return { facadeIds, experimentIds, changed };
}
