import type { Store } from '../../store/db.ts';
import type { Dashboard } from '../../generated/schema-types.ts';
import { fieldPath, isPlainObject } from '../../objects.ts';
import type { Problem } from '../../types.ts';
import { validateCharts, validateSections, type SectionInput } from './charts.ts';
import { vdmFields, type FieldCatalog } from './fields.ts';

/** A Dashboard manifest's spec: the import payload of docs/contract/api.md §2.4 after schema validation (schemas/dashboard.schema.json). */
export type DashboardSpec = Dashboard;

/** docs/contract/api.md §7, word for word. */
export const CHARTS_REQUIRED = "Request body must include a non-empty 'charts' array or 'sections' array with charts";

/** The tag every imported dashboard carries, exactly once. */
export const IMPORT_TAG = 'sdk-import';


function hasSectionCharts(sections: unknown): boolean {
  return Array.isArray(sections) && sections.some((s) => isPlainObject(s) && Array.isArray(s.charts) && s.charts.length > 0);
}

/** True for simple mode: the charts come from `charts`, one section named after the dashboard. */
export function isSimpleMode(spec: Pick<DashboardSpec, 'charts' | 'sections'>): boolean {
  return spec.charts !== undefined && !hasSectionCharts(spec.sections);
}

/**
 * Semantic rules of a whole payload (beyond the schema): charts or sections with charts,
 * not both, and the chart rules of `validateSections` (fields only when `catalog` is given).
 */
export function validateDashboard(spec: unknown, catalog: FieldCatalog | undefined, prefix = ''): Problem[] {
  if (!isPlainObject(spec)) return [];
  const charts = Array.isArray(spec.charts) ? spec.charts : [];
  const sectioned = hasSectionCharts(spec.sections);
  if (charts.length === 0 && !sectioned) return [{ path: fieldPath(prefix, 'charts'), message: CHARTS_REQUIRED }];
  if (charts.length > 0 && sectioned) {
    const path = fieldPath(prefix, 'charts');
    return [{ path, message: `${path} and sections cannot both hold charts: use charts (one section) or sections` }];
  }
  return sectioned ? validateSections(spec.sections, catalog, fieldPath(prefix, 'sections')) : validateCharts(charts, catalog, fieldPath(prefix, 'charts'));
}

/** Which referenced objects the caller may see (an API caller confined to its tenants). */
export interface ReferenceFilter {
  connection(connectionId: string): boolean;
  vdm(vdmId: string): boolean;
}

const SEE_ALL: ReferenceFilter = { connection: () => true, vdm: () => true };

/**
 * Checks against the store: `dataSource.dbId` names a connection, `vdmId` (when given) a VDM,
 * and every chart field is one of that VDM's columns or calculation labels.
 */
export function checkDashboardReferences(db: Store, spec: DashboardSpec, prefix = '', visible: ReferenceFilter = SEE_ALL): Problem[] {
  const problems: Problem[] = [];
  const ds = fieldPath(prefix, 'dataSource');
  const connection = db.statements.prepare('SELECT 1 FROM connections WHERE connection_id = ?').get(spec.dataSource.dbId);
  if (!connection || !visible.connection(spec.dataSource.dbId)) {
    problems.push({ path: `${ds}.dbId`, message: `${ds}.dbId ${spec.dataSource.dbId} is not an existing connection` });
  }
  const vdmId = spec.dataSource.vdmId;
  if (vdmId === undefined) return problems;
  const vdm = db.statements.prepare('SELECT config FROM vdms WHERE vdm_id = ?').get(vdmId) as { config: string } | undefined;
  // Another tenant's VDM answers exactly like an unknown one: its columns are never checked against.
  if (!vdm || !visible.vdm(vdmId)) {
    problems.push({ path: `${ds}.vdmId`, message: `${ds}.vdmId ${vdmId} is not an existing VDM` });
    return problems;
  }
  const config = JSON.parse(vdm.config) as unknown;
  return [...problems, ...validateDashboard(spec, vdmFields(isPlainObject(config) ? config : {}), prefix)];
}

/** The sections to store: simple mode is one section named after the dashboard. */
export function sectionsOf(spec: DashboardSpec): SectionInput[] {
  if (!isSimpleMode(spec)) return spec.sections ?? [];
  return [{ name: spec.name, charts: spec.charts ?? [], topSection: false, category: false }];
}

/** Tags as stored: the given ones without duplicates, and `sdk-import` exactly once, last. */
export function normalizeTags(tags: readonly string[] | undefined): string[] {
  return [...new Set((tags ?? []).filter((t) => t !== IMPORT_TAG)), IMPORT_TAG];
}

