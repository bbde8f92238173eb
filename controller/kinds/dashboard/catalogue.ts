/**
 * The chart-type and aggregation catalogue of docs/contract/api.md §4.9: the one source for
 * `GET /v1/sdk/chart-types`, chart validation and normalization.
 */
import type { AGGREGATIONS as SCHEMA_AGGREGATIONS } from '../../generated/schema-constants.ts';

/** The aggregation names the schema accepts: the table below must map exactly these. */
type Aggregation = (typeof SCHEMA_AGGREGATIONS)[number];

/** Friendly chart-type name → CH code, in the order of docs/contract/api.md §4.9. */
export const CHART_TYPES: Readonly<Record<string, string>> = Object.freeze({
  avatar: 'CH00001',
  'clustered-bar': 'CH00002',
  'clustered-column': 'CH00003',
  column: 'CH00003',
  donut: 'CH00005',
  'column-line': 'CH00006',
  gauge: 'CH00007',
  'horizontal-bar': 'CH00011',
  bar: 'CH00011',
  'line-area': 'CH00013',
  area: 'CH00013',
  line: 'CH00014',
  map: 'CH00015',
  'nested-donut': 'CH00016',
  numeric: 'CH00018',
  pie: 'CH00019',
  'polar-area': 'CH00021',
  radar: 'CH00022',
  scatter: 'CH00024',
  'trend-view': 'CH00026',
  'stacked-bar': 'CH00031',
  'stacked-column': 'CH00031',
  table: 'CH00032',
  grid: 'CH00032',
  'step-line': 'CH00033',
  sunburst: 'CH00034',
  bubble: 'CH00040',
  kpi: 'CH00055',
  'kpi-card': 'CH00055',
  waterfall: 'CH00064',
});

/** Friendly aggregation name (the schema's measure `aggregation` enum) → operation name. */
export const AGGREGATIONS: Readonly<Record<string, string>> = Object.freeze({
  sum: 'SUM',
  count: 'COUNT',
  average: 'AVERAGE',
  avg: 'AVERAGE',
  min: 'MIN',
  max: 'MAX',
  distinct: 'DISTINCT',
  'as-is': 'AS-IS',
} satisfies Record<Aggregation, string>);

export const DEFAULT_AGGREGATION = 'sum';
/** The aggregation that references a pre-computed calculation of the VDM by its label. */
export const AS_IS = 'as-is';

/** CH codes that take a `card` (kpi, kpi-card) and a `bubble` (bubble). */
export const KPI_CODE = 'CH00055';
export const BUBBLE_CODE = 'CH00040';

const CODES: ReadonlySet<string> = new Set(Object.values(CHART_TYPES));

/** The CH code of a friendly name or of a CH code of the catalogue; undefined when neither. */
export function resolveChartType(typeOrCode: string): string | undefined {
  if (Object.hasOwn(CHART_TYPES, typeOrCode)) return CHART_TYPES[typeOrCode];
  return CODES.has(typeOrCode) ? typeOrCode : undefined;
}
