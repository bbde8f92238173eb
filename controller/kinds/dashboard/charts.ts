import type {
  DashboardBubble,
  DashboardCard,
  DashboardChart,
  DashboardDisplay,
  DashboardSection,
  DashboardSort,
} from '../../generated/schema-types.ts';
import { isPlainObject } from '../../objects.ts';
import type { Problem } from '../../types.ts';
import { AS_IS, BUBBLE_CODE, DEFAULT_AGGREGATION, KPI_CODE, resolveChartType } from './catalogue.ts';
import type { FieldCatalog } from './fields.ts';
import { autoLayout, type Grid } from './layout.ts';

export type SortItem = DashboardSort[number];
export type Display = DashboardDisplay;
export type Card = DashboardCard;
export type Bubble = DashboardBubble;
/** A chart of the import payload (docs/contract/api.md §2.4) after schema validation (defaults filled in). */
export type ChartInput = DashboardChart;
/** A section to build: a Dashboard's section, or a section of an onboarding package with its name settled. */
export type SectionInput = DashboardSection;

export interface NormalizedMeasure {
  field: string;
  aggregation: string;
}

export interface NormalizedDimension {
  field: string;
  isDate: boolean;
}

/** A chart as stored: IDs assigned, type resolved to its CH code, every default applied. */
export interface NormalizedChart {
  chartId: string;
  title: string;
  /** The CH code. */
  type: string;
  measures: NormalizedMeasure[];
  dimensions: NormalizedDimension[];
  filters?: unknown[];
  limit?: number;
  sort?: SortItem[];
  grid: Grid;
  display: Display;
  /** Title of the drill-down source chart (as written, so the chart is a valid import payload again)… */
  drillDown?: string;
  /** …and the source chart's ID it resolved to. */
  drillDownChartId?: string;
  card?: Card;
  bubble?: Bubble;
}

export interface NormalizedSection {
  /** The experiment this section kept from the previous apply (same section name), if any. */
  experimentId?: string;
  name: string;
  topSection: boolean;
  category: boolean;
  charts: NormalizedChart[];
}

/** What a previous apply stored, enough to keep experiment and chart IDs stable. */
export interface PreviousSection {
  experimentId?: string;
  name: string;
  charts: ReadonlyArray<{ chartId: string; title: string }>;
}

type Rec = Record<string, unknown>;
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

/**
 * The rules beyond the JSON Schema for the sections of a dashboard (import payload or
 * onboarding package): chart types of the catalogue, drill-downs naming another chart of the
 * same section, `card` only on KPI charts, `bubble` only on bubble charts, unique section
 * names and, when a VDM's field catalogue is given, fields among its columns (or calculation
 * labels for `as-is`). Tolerates input the schema rejected, so both lists can be reported.
 */
export function validateSections(sections: unknown, catalog: FieldCatalog | undefined, pathPrefix: string): Problem[] {
  if (!Array.isArray(sections)) return [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  sections.forEach((section, i) => {
    if (!isPlainObject(section)) return;
    const path = `${pathPrefix}[${i}]`;
    const name = str(section.name);
    if (name !== undefined) {
      if (seen.has(name)) problems.push({ path: `${path}.name`, message: `${path}.name "${name}" is used by another section: section names must be unique` });
      seen.add(name);
    }
    problems.push(...validateCharts(section.charts, catalog, `${path}.charts`));
  });
  return problems;
}

/** The same rules for the charts of one section (`charts` of a simple-mode import). */
export function validateCharts(charts: unknown, catalog: FieldCatalog | undefined, pathPrefix: string): Problem[] {
  if (!Array.isArray(charts)) return [];
  const problems: Problem[] = [];
  const titles = charts.map((c) => (isPlainObject(c) ? str(c.title) : undefined));
  charts.forEach((chart, j) => {
    if (!isPlainObject(chart)) return;
    const p = `${pathPrefix}[${j}]`;
    const add = (path: string, message: string) => problems.push({ path, message: `${path} ${message}` });
    const code = typeof chart.type === 'string' ? resolveChartType(chart.type) : undefined;
    if (typeof chart.type === 'string' && chart.type !== '' && code === undefined) {
      add(`${p}.type`, `"${chart.type}" is not a chart type: use a name or CH code of GET /v1/sdk/chart-types`);
    }
    if (chart.card !== undefined && code !== undefined && code !== KPI_CODE) add(`${p}.card`, 'is only allowed on kpi and kpi-card charts');
    if (chart.bubble !== undefined && code !== undefined && code !== BUBBLE_CODE) add(`${p}.bubble`, 'is only allowed on bubble charts');
    const drill = str(chart.drillDown);
    if (drill !== undefined) {
      const sources = titles.filter((t, k) => t === drill && k !== j).length;
      if (sources === 0) add(`${p}.drillDown`, `"${drill}" must be the title of another chart of the same section`);
      else if (sources > 1) add(`${p}.drillDown`, `"${drill}" is the title of ${sources} charts of the section: a drill-down source needs a unique title`);
    }
    if (catalog) problems.push(...checkFields(chart, catalog, p));
  });
  return problems;
}

type FieldUse = 'column' | 'any';

/** Aggregations that only make sense on numbers; checked when the column's type is declared. */
const NUMERIC_AGGREGATIONS = new Set(['sum', 'average', 'avg']);
const NUMBER_TYPES = new Set(['number', 'numeric', 'integer', 'int', 'bigint', 'decimal', 'float', 'double', 'real']);
/** Aggregations of a column that may also be the chart's dimension (rows per region by region). */
const COUNTING_AGGREGATIONS = new Set(['count', 'distinct']);

function checkFields(chart: Rec, catalog: FieldCatalog, p: string): Problem[] {
  const problems: Problem[] = [];
  const check = (path: string, field: unknown, use: FieldUse) => {
    if (typeof field !== 'string' || field === '' || catalog.columns.has(field)) return;
    if (use === 'any' && catalog.calculations.has(field)) return;
    const message =
      use === 'column' && catalog.calculations.has(field)
        ? `"${field}" is a calculation of the VDM: use it with aggregation as-is`
        : `"${field}" is not a column${use === 'any' ? ' or calculation' : ''} of the VDM`;
    problems.push({ path, message: `${path} ${message}` });
  };
  const fieldOf = (item: unknown, path: string): [string, unknown] =>
    isPlainObject(item) ? [`${path}.field`, item.field] : [path, item];
  const dimensionNames = new Set(Array.isArray(chart.dimensions) ? chart.dimensions.map((d) => (isPlainObject(d) ? d.field : d)) : []);
  if (Array.isArray(chart.measures)) {
    chart.measures.forEach((m, k) => {
      const [path, field] = fieldOf(m, `${p}.measures[${k}]`);
      const aggregation = isPlainObject(m) && typeof m.aggregation === 'string' ? m.aggregation : DEFAULT_AGGREGATION;
      check(path, field, aggregation === AS_IS ? 'any' : 'column');
      if (typeof field !== 'string' || !catalog.columns.has(field)) return;
      const type = catalog.types?.get(field);
      if (NUMERIC_AGGREGATIONS.has(aggregation) && type !== undefined && !NUMBER_TYPES.has(type)) {
        problems.push({ path, message: `${path} ${aggregation} of "${field}", a ${type} column: ${aggregation} needs a number column (use count or distinct)` });
      }
      if (dimensionNames.has(field) && !COUNTING_AGGREGATIONS.has(aggregation)) {
        problems.push({ path, message: `${path} "${field}" is also a dimension of the chart: a measure must be another column (or count/distinct of it)` });
      }
    });
  }
  if (Array.isArray(chart.dimensions)) {
    chart.dimensions.forEach((d, k) => check(...fieldOf(d, `${p}.dimensions[${k}]`), 'column'));
  }
  if (Array.isArray(chart.sort)) {
    chart.sort.forEach((s, k) => isPlainObject(s) && check(`${p}.sort[${k}].field`, s.field, 'any'));
  }
  const trend = isPlainObject(chart.card) && isPlainObject(chart.card.trend) ? chart.card.trend : undefined;
  if (trend) {
    check(`${p}.card.trend.field`, trend.field, 'any');
    check(`${p}.card.trend.dateField`, trend.dateField, 'column');
  }
  if (isPlainObject(chart.bubble)) {
    const b = chart.bubble;
    check(`${p}.bubble.sizeField`, b.sizeField, 'any');
    check(`${p}.bubble.colorField`, b.colorField, 'any');
    for (const axis of ['xAxis', 'yAxis'] as const) check(...fieldOf(b[axis], `${p}.bubble.${axis}`), 'any');
  }
  return problems;
}

const CHART_ID = /^chart_(\d+)$/;

/**
 * Normalizes validated sections into what the store keeps: chart IDs `chart_<n>` unique
 * within the dashboard (kept for charts that keep their title), CH codes, measures and
 * dimensions as objects, the row limit, the auto grid and drill-downs resolved to chart IDs.
 * Experiments keep their ID when their section keeps its name (or when a dashboard of one
 * section renames it).
 */
export function buildSections(sections: readonly SectionInput[], previous: readonly PreviousSection[] = []): NormalizedSection[] {
  const experimentIds = matchExperiments(sections, previous);
  const ids = new ChartIds(previous);
  return sections.map((section, i) => {
    const codes = section.charts.map((c) => resolveChartType(c.type) ?? c.type);
    const chartIds = section.charts.map((c) => ids.take(section.name, c.title ?? ''));
    const grids = autoLayout(section.charts.map((c, k) => ({ kpi: codes[k] === KPI_CODE, grid: c.grid })));
    const byTitle = new Map<string, string>();
    section.charts.forEach((c, k) => {
      if (c.title && !byTitle.has(c.title)) byTitle.set(c.title, chartIds[k]);
    });
    const charts = section.charts.map((c, k) => normalizeChart(c, chartIds[k], codes[k], grids[k], byTitle));
    const experimentId = experimentIds[i];
    return {
      ...(experimentId ? { experimentId } : {}),
      name: section.name,
      topSection: section.topSection ?? false,
      category: section.category ?? false,
      charts,
    };
  });
}

function normalizeChart(c: ChartInput, chartId: string, code: string, grid: Grid, byTitle: Map<string, string>): NormalizedChart {
  const hasFilters = Array.isArray(c.filters) && c.filters.length > 0;
  const limit = c.limit ?? (hasFilters ? undefined : 100);
  const drillDownChartId = c.drillDown ? byTitle.get(c.drillDown) : undefined;
  const out: NormalizedChart = {
    chartId,
    title: c.title ?? '',
    type: code,
    measures: c.measures.map((m) =>
      typeof m === 'string' ? { field: m, aggregation: DEFAULT_AGGREGATION } : { field: m.field, aggregation: m.aggregation ?? DEFAULT_AGGREGATION },
    ),
    dimensions: c.dimensions.map((d) => (typeof d === 'string' ? { field: d, isDate: false } : { field: d.field, isDate: d.isDate ?? false })),
    grid,
    display: { ...(c.display as Display) },
  };
  if (c.filters !== undefined) out.filters = c.filters;
  if (limit !== undefined) out.limit = limit;
  if (c.sort !== undefined) out.sort = c.sort;
  if (c.drillDown !== undefined) out.drillDown = c.drillDown;
  if (drillDownChartId !== undefined) out.drillDownChartId = drillDownChartId;
  if (c.card !== undefined) out.card = c.card;
  if (c.bubble !== undefined) out.bubble = c.bubble;
  return out;
}

function matchExperiments(sections: readonly SectionInput[], previous: readonly PreviousSection[]): (string | undefined)[] {
  const byName = new Map(previous.filter((p) => p.experimentId).map((p) => [p.name, p.experimentId as string]));
  const out = sections.map((s) => byName.get(s.name));
  if (sections.length === 1 && previous.length === 1 && out[0] === undefined) out[0] = previous[0].experimentId;
  for (let i = 0; i < out.length; i++) {
    if (out[i] !== undefined && out.indexOf(out[i]) !== i) out[i] = undefined;
  }
  return out;
}

/** Hands out chart IDs: a chart keeps the ID of the previous chart with its title, others get new numbers. */
class ChartIds {
  readonly #bySectionTitle = new Map<string, string[]>();
  readonly #byTitle = new Map<string, string[]>();
  readonly #used = new Set<string>();
  #last = 0;

  constructor(previous: readonly PreviousSection[]) {
    for (const section of previous) {
      for (const chart of section.charts) {
        const n = CHART_ID.exec(chart.chartId);
        if (n) this.#last = Math.max(this.#last, Number(n[1]));
        if (!chart.title) continue;
        push(this.#bySectionTitle, `${section.name}\u0000${chart.title}`, chart.chartId);
        push(this.#byTitle, chart.title, chart.chartId);
      }
    }
  }

  take(section: string, title: string): string {
    if (title) {
      const kept = this.#claim(this.#bySectionTitle.get(`${section}\u0000${title}`)) ?? this.#claim(this.#byTitle.get(title));
      if (kept) return kept;
    }
    let id: string;
    do id = `chart_${++this.#last}`;
    while (this.#used.has(id));
    this.#used.add(id);
    return id;
  }

  #claim(candidates: string[] | undefined): string | undefined {
    const id = candidates?.find((c) => !this.#used.has(c));
    if (id) this.#used.add(id);
    return id;
  }
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
