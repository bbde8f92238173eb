import { isPlainObject } from '../../objects.ts';

/** The field names a VDM offers to charts: its selected columns and its calculation labels. */
export interface FieldCatalog {
  columns: Set<string>;
  /** Labels of pre-computed calculations (measures, expressions, …), usable with aggregation `as-is`. */
  calculations: Set<string>;
  /** Declared column types (`number`, `text`, `date`, ...) where known: from the core model or a selected column's `type`. */
  types?: Map<string, string>;
}

/** Configuration arrays whose items' `label` names a calculation a chart can use as is. */
const CALCULATION_ARRAYS = [
  'measureConfiguration',
  'expressionConfiguration',
  'timeSeriesConfiguration',
  'rankingConfiguration',
  'arithmeticConfiguration',
  'transformationConfiguration',
] as const;

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0;
}

/**
 * Builds the field catalogue of a VDM configuration (the VDM object of docs/contract/api.md §2.3):
 * `selectedColumns` items are a column name or an object with `name`.
 */
export function vdmFields(vdmConfig: Record<string, unknown>, knownTypes?: ReadonlyMap<string, string>): FieldCatalog {
  const columns = new Set<string>();
  const types = new Map<string, string>();
  const calculations = new Set<string>();
  const selected = vdmConfig.selectedColumns;
  if (Array.isArray(selected)) {
    for (const item of selected) {
      if (nonEmptyString(item)) columns.add(item);
      else if (isPlainObject(item) && nonEmptyString(item.name)) {
        columns.add(item.name);
        if (nonEmptyString(item.type)) types.set(item.name, item.type.toLowerCase());
      }
    }
  }
  for (const c of columns) {
    const known = knownTypes?.get(c);
    if (known && !types.has(c)) types.set(c, known);
  }
  for (const key of CALCULATION_ARRAYS) {
    const items = vdmConfig[key];
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      const label = isPlainObject(item) ? item.label : undefined;
      if (nonEmptyString(label)) calculations.add(label);
    }
  }
  return { columns, calculations, ...(types.size ? { types } : {}) };
}

/**
 * The column types a core model's definition declares: `columns` items written as
 * `{name, type}` (a bare name declares no type). Lower-cased: `number`, `text`, `date`, ...
 */
export function columnTypesOf(definition: unknown): Map<string, string> {
  const types = new Map<string, string>();
  const cols = isPlainObject(definition) ? definition.columns : undefined;
  if (!Array.isArray(cols)) return types;
  for (const c of cols) if (isPlainObject(c) && nonEmptyString(c.name) && nonEmptyString(c.type)) types.set(c.name, c.type.toLowerCase());
  return types;
}
