import { describe, expect, it } from 'vitest';
import { AGGREGATIONS, CHART_TYPES, resolveChartType } from '../../../../controller/kinds/dashboard/catalogue.ts';
import { vdmFields } from '../../../../controller/kinds/dashboard/fields.ts';
import { testSchemas } from '../../../helpers/schemas.ts';

describe('chart-type catalogue (docs/contract/api.md §4.9)', () => {
  it('maps every friendly name of the spec to its CH code', () => {
    expect(CHART_TYPES).toEqual({
      avatar: 'CH00001', 'clustered-bar': 'CH00002', 'clustered-column': 'CH00003', column: 'CH00003', donut: 'CH00005',
      'column-line': 'CH00006', gauge: 'CH00007', 'horizontal-bar': 'CH00011', bar: 'CH00011', 'line-area': 'CH00013',
      area: 'CH00013', line: 'CH00014', map: 'CH00015', 'nested-donut': 'CH00016', numeric: 'CH00018', pie: 'CH00019',
      'polar-area': 'CH00021', radar: 'CH00022', scatter: 'CH00024', 'trend-view': 'CH00026', 'stacked-bar': 'CH00031',
      'stacked-column': 'CH00031', table: 'CH00032', grid: 'CH00032', 'step-line': 'CH00033', sunburst: 'CH00034',
      bubble: 'CH00040', kpi: 'CH00055', 'kpi-card': 'CH00055', waterfall: 'CH00064',
    });
    expect(AGGREGATIONS).toEqual({ sum: 'SUM', count: 'COUNT', average: 'AVERAGE', avg: 'AVERAGE', min: 'MIN', max: 'MAX', distinct: 'DISTINCT', 'as-is': 'AS-IS' });
  });

  it('resolves friendly names and accepts CH codes of the catalogue as they are', () => {
    expect(resolveChartType('kpi-card')).toBe('CH00055');
    expect(resolveChartType('CH00064')).toBe('CH00064');
    expect(resolveChartType('CH99999')).toBeUndefined();
    expect(resolveChartType('Column')).toBeUndefined();
    expect(resolveChartType('toString')).toBeUndefined();
  });

  it('is the same list of aggregations the schema accepts', () => {
    const schema = testSchemas().schema('dashboard') as { $defs: { measure: { properties: { aggregation: { enum: string[] } } } } };
    expect(schema.$defs.measure.properties.aggregation.enum).toEqual(Object.keys(AGGREGATIONS));
  });
});

describe('vdmFields', () => {
  it('collects selected columns (names or objects with name) and calculation labels', () => {
    const catalog = vdmFields({
      selectedColumns: ['region', { name: 'revenue', table: 'sales' }, { table: 'no-name' }, 42],
      measureConfiguration: [{ label: 'Total revenue' }, { name: 'no-label' }],
      expressionConfiguration: [{ label: 'Margin %' }],
      rankingConfiguration: [{ label: 'Top region' }],
      joinConfiguration: [{ label: 'not a field' }],
    });
    expect([...catalog.columns]).toEqual(['region', 'revenue']);
    expect([...catalog.calculations]).toEqual(['Total revenue', 'Margin %', 'Top region']);
  });

  it('is empty for a VDM without selections', () => {
    expect(vdmFields({})).toEqual({ columns: new Set(), calculations: new Set() });
  });
});
