import { isPlainObject } from '../../objects.ts';

/** The field names a VDM offers to charts: its selected columns and its calculation labels. */
export interface FieldCatalog {
  columns: Set<string>;
  /** Labels of pre-computed calculations (measures, expressions, …), usable with aggregation `as-is`. */
  calculations: Set<string>;
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
 * Builds the field catalogue of a VDM configuration (the VDM object of spec 2.3):
 * `selectedColumns` items are a column name or an object with `name`.
 */
export function vdmFields(vdmConfig: Record<string, unknown>): FieldCatalog {
  const columns = new Set<string>();
  const calculations = new Set<string>();
  const selected = vdmConfig.selectedColumns;
  if (Array.isArray(selected)) {
    for (const item of selected) {
      if (nonEmptyString(item)) columns.add(item);
      else if (isPlainObject(item) && nonEmptyString(item.name)) columns.add(item.name);
    }
  }
  for (const key of CALCULATION_ARRAYS) {
    const items = vdmConfig[key];
    if (!Array.isArray(items)) continue;
    for (const item of items) {
      const label = isPlainObject(item) ? item.label : undefined;
      if (nonEmptyString(label)) calculations.add(label);
    }
  }
  return { columns, calculations };
}
