import type { Database } from 'better-sqlite3';
import type { Problem } from '../../types.ts';
import { validateCharts, validateSections, type ChartInput, type SectionInput } from './charts.ts';
import { vdmFields, type FieldCatalog } from './fields.ts';

/** A Dashboard manifest's spec: the import payload of spec 2.4 after schema validation. */
export interface DashboardSpec {
  name: string;
  description?: string;
  dataSource: { dbId: string; vdmId?: string; connType: string; schemaName?: string };
  charts?: ChartInput[];
  sections?: SectionInput[];
  layout: { columns: number; chartHeight: string; kpiHeight: string; chartWidth: string };
  templateType?: string;
  layoutTemplateName?: string;
  category?: string[];
  tags?: string[];
  isPublic: boolean;
}

/** Spec 7, word for word. */
export const CHARTS_REQUIRED = "Request body must include a non-empty 'charts' array or 'sections' array with charts";

/** The tag every imported dashboard carries, exactly once. */
export const IMPORT_TAG = 'sdk-import';

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
const join = (prefix: string, field: string) => (prefix ? `${prefix}.${field}` : field);

function hasSectionCharts(sections: unknown): boolean {
  return Array.isArray(sections) && sections.some((s) => isRec(s) && Array.isArray(s.charts) && s.charts.length > 0);
}

/** True for simple mode: the charts come from `charts`, one section named after the dashboard. */
export function isSimpleMode(spec: Pick<DashboardSpec, 'sections'>): boolean {
  return !hasSectionCharts(spec.sections);
}

/**
 * Semantic rules of a whole payload (beyond the schema): charts or sections with charts,
 * not both, and the chart rules of `validateSections` (fields only when `catalog` is given).
 */
export function validateDashboard(spec: unknown, catalog: FieldCatalog | undefined, prefix = ''): Problem[] {
  if (!isRec(spec)) return [];
  const charts = Array.isArray(spec.charts) ? spec.charts : [];
  const sectioned = hasSectionCharts(spec.sections);
  if (charts.length === 0 && !sectioned) return [{ path: join(prefix, 'charts'), message: CHARTS_REQUIRED }];
  if (charts.length > 0 && sectioned) {
    const path = join(prefix, 'charts');
    return [{ path, message: `${path} and sections cannot both hold charts: use charts (one section) or sections` }];
  }
  return sectioned ? validateSections(spec.sections, catalog, join(prefix, 'sections')) : validateCharts(charts, catalog, join(prefix, 'charts'));
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
export function checkDashboardReferences(db: Database, spec: DashboardSpec, prefix = '', visible: ReferenceFilter = SEE_ALL): Problem[] {
  const problems: Problem[] = [];
  const ds = join(prefix, 'dataSource');
  const connection = db.prepare('SELECT 1 FROM connections WHERE connection_id = ?').get(spec.dataSource.dbId);
  if (!connection || !visible.connection(spec.dataSource.dbId)) {
    problems.push({ path: `${ds}.dbId`, message: `${ds}.dbId ${spec.dataSource.dbId} is not an existing connection` });
  }
  const vdmId = spec.dataSource.vdmId;
  if (vdmId === undefined) return problems;
  const vdm = db.prepare('SELECT config FROM vdms WHERE vdm_id = ?').get(vdmId) as { config: string } | undefined;
  // Another tenant's VDM answers exactly like an unknown one: its columns are never checked against.
  if (!vdm || !visible.vdm(vdmId)) {
    problems.push({ path: `${ds}.vdmId`, message: `${ds}.vdmId ${vdmId} is not an existing VDM` });
    return problems;
  }
  const config = JSON.parse(vdm.config) as unknown;
  return [...problems, ...validateDashboard(spec, vdmFields(isRec(config) ? config : {}), prefix)];
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

