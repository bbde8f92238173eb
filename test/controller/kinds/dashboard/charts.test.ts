import { describe, expect, it } from 'vitest';
import { buildSections, validateSections, type SectionInput } from '../../../../controller/kinds/dashboard/charts.ts';
import { vdmFields } from '../../../../controller/kinds/dashboard/fields.ts';
import { validateDashboard, CHARTS_REQUIRED } from '../../../../controller/kinds/dashboard/spec.ts';
import { testSchemas } from '../../../helpers/schemas.ts';

const schemas = testSchemas();

/** Schema-validated sections (defaults filled in), as the applier gets them. */
function sections(input: unknown[]): SectionInput[] {
  const payload = { name: 'D', dataSource: { dbId: 'D2026A00001' }, sections: input };
  const r = schemas.validate<{ sections: SectionInput[] }>('dashboard', payload);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.value.sections;
}

const DISPLAY = {
  showValues: true, showLegend: true, showTooltip: false, showNull: false,
  enableZoom: false, enableForecast: false, showXScrollBar: false, showYScrollBar: false,
};

const messages = (spec: unknown) => {
  const r = schemas.validate('dashboard', structuredClone(spec));
  return [...(r.ok ? [] : r.problems), ...validateDashboard(spec, undefined)].map((p) => p.message);
};
const base = { name: 'D', dataSource: { dbId: 'D2026A00001' } };
const col = (extra: Record<string, unknown> = {}) => ({ title: 'C', type: 'column', measures: ['m'], dimensions: ['d'], ...extra });

describe('dashboard validation', () => {
  it('requires a non-empty charts array or sections with charts, with the text of docs/contract/api.md §7', () => {
    for (const spec of [base, { ...base, charts: [] }, { ...base, sections: [] }, { ...base, sections: [{ name: 'A', charts: [] }] }]) {
      expect(messages(spec)).toEqual([CHARTS_REQUIRED]);
    }
    expect(CHARTS_REQUIRED).toBe("Request body must include a non-empty 'charts' array or 'sections' array with charts");
  });

  it('refuses charts and sections with charts at once', () => {
    expect(messages({ ...base, charts: [col()], sections: [{ name: 'A', charts: [col()] }] })).toEqual([
      'charts and sections cannot both hold charts: use charts (one section) or sections',
    ]);
  });

  it('lists every schema and semantic problem with its path', () => {
    const spec = {
      ...base,
      charts: [
        col({ type: 'pie-chart' }),
        col({ grid: { width: 13, x: -1, y: -2 }, measures: [{ field: 'm', aggregation: 'median' }], sort: [{ field: 'm', direction: 'up' }] }),
        col({ title: 'K', card: { color: 'red', trendColor: '#12345', trend: { field: 'm', interval: 'Hour', format: 'delta' } } }),
        col({ bubble: { colorRange: ['#fff'] } }),
        { title: 'B', type: 'bubble', measures: [], dimensions: [], bubble: { colorRange: ['#fff', '#000', '#abc'], xAxis: { field: 'x', type: 'axis' } } },
        col({ title: 'X', drillDown: 'X' }),
        col({ title: 'Y', drillDown: 'Nope' }),
      ],
    };
    expect(messages(spec)).toEqual([
      'charts[1].measures[0].aggregation must be one of sum, count, average, avg, min, max, distinct, as-is',
      'charts[1].sort[0].direction must be one of asc, desc',
      'charts[1].grid.width must be <= 12',
      'charts[1].grid.x must be >= 0',
      'charts[1].grid.y must be >= 0',
      'charts[2].card.color must be a hex colour such as #1A73E8',
      'charts[2].card.trendColor must be a hex colour such as #1A73E8',
      'charts[2].card.trend.dateField is required',
      'charts[2].card.trend.interval must be one of Day, Week, Month, Quarter, Year',
      'charts[2].card.trend.format must be one of percentage, absolute, value',
      'charts[3].bubble.colorRange must hold exactly two hex colours (minimum and maximum)',
      'charts[4].bubble.xAxis.type must be one of dimension, measure',
      'charts[4].bubble.colorRange must hold exactly two hex colours (minimum and maximum)',
      'charts[0].type "pie-chart" is not a chart type: use a name or CH code of GET /v1/sdk/chart-types',
      'charts[2].card is only allowed on kpi and kpi-card charts',
      'charts[3].bubble is only allowed on bubble charts',
      'charts[5].drillDown "X" must be the title of another chart of the same section',
      'charts[6].drillDown "Nope" must be the title of another chart of the same section',
    ]);
  });

  it('accepts card on kpi, kpi-card and CH00055, bubble on bubble and CH00040, grid width 1 and 12', () => {
    const card = { icon: 'Money', color: '#1A73E8', trendColor: '#abc', trend: { field: 'm', dateField: 'd' } };
    const bubble = { sizeField: 's', xAxis: 'x', yAxis: { field: 'y', type: 'measure' }, colorField: 'c', colorRange: ['#000000', '#FFFFFF'] };
    expect(
      messages({
        ...base,
        charts: [
          col({ type: 'kpi', card }), col({ type: 'kpi-card', card }), col({ type: 'CH00055', card }),
          col({ type: 'bubble', bubble }), col({ type: 'CH00040', bubble }),
          col({ grid: { width: 1, x: 0, y: 0 } }), col({ grid: { width: 12 } }),
        ],
      }),
    ).toEqual([]);
  });

  it('checks drill-downs within the section only and refuses an ambiguous source title', () => {
    const problems = validateSections(
      [
        { name: 'A', charts: [col({ title: 'Src' }), col({ title: 'Src' }), col({ title: 'T', drillDown: 'Src' })] },
        { name: 'B', charts: [col({ title: 'T2', drillDown: 'Src' })] },
        { name: 'A', charts: [col()] },
      ],
      undefined,
      'sections',
    );
    expect(problems.map((p) => p.message)).toEqual([
      'sections[0].charts[2].drillDown "Src" is the title of 2 charts of the section: a drill-down source needs a unique title',
      'sections[1].charts[0].drillDown "Src" must be the title of another chart of the same section',
      'sections[2].name "A" is used by another section: section names must be unique',
    ]);
  });

  it('refuses a sum or average of a column typed other than number, and a measure that is also the dimension', () => {
    const types = new Map([['region', 'text'], ['revenue', 'number'], ['order_date', 'date']]);
    const catalog = vdmFields({ selectedColumns: ['region', 'revenue', 'order_date', { name: 'note', type: 'TEXT' }, 'untyped'] }, types);
    const problems = validateSections(
      [
        {
          name: 'A',
          charts: [
            { type: 'kpi', measures: ['region', { field: 'order_date', aggregation: 'average' }, { field: 'note', aggregation: 'sum' }], dimensions: [] },
            { type: 'bar', measures: [{ field: 'revenue', aggregation: 'sum' }, { field: 'region', aggregation: 'count' }, 'untyped', { field: 'region', aggregation: 'max' }], dimensions: ['region'] },
          ],
        },
      ],
      catalog,
      'sections',
    );
    expect(problems.map((p) => p.message)).toEqual([
      'sections[0].charts[0].measures[0] sum of "region", a text column: sum needs a number column (use count or distinct)',
      'sections[0].charts[0].measures[1].field average of "order_date", a date column: average needs a number column (use count or distinct)',
      'sections[0].charts[0].measures[2].field sum of "note", a text column: sum needs a number column (use count or distinct)',
      'sections[0].charts[1].measures[3].field "region" is also a dimension of the chart: a measure must be another column (or count/distinct of it)',
    ]);
  });

  it('checks every field against the VDM catalogue when one is given', () => {
    const catalog = vdmFields({ selectedColumns: ['region', 'revenue', 'order_date'], measureConfiguration: [{ label: 'Margin' }] });
    const problems = validateSections(
      [
        {
          name: 'A',
          charts: [
            { type: 'column', measures: ['revenue', { field: 'Margin', aggregation: 'as-is' }, { field: 'revenue', aggregation: 'as-is' }], dimensions: ['region', { field: 'order_date' }], sort: [{ field: 'Margin' }] },
            { type: 'column', measures: ['Margin', { field: 'cost' }, { field: 'nope', aggregation: 'as-is' }], dimensions: ['country'], sort: [{ field: 'x' }] },
            { type: 'kpi', measures: [], dimensions: [], card: { trend: { field: 'Margin2', dateField: 'Margin' } } },
            { type: 'bubble', measures: [], dimensions: [], bubble: { sizeField: 's', colorField: 'Margin', xAxis: 'region', yAxis: { field: 'y' } } },
          ],
        },
      ],
      catalog,
      'sections',
    );
    expect(problems.map((p) => p.message)).toEqual([
      'sections[0].charts[1].measures[0] "Margin" is a calculation of the VDM: use it with aggregation as-is',
      'sections[0].charts[1].measures[1].field "cost" is not a column of the VDM',
      'sections[0].charts[1].measures[2].field "nope" is not a column or calculation of the VDM',
      'sections[0].charts[1].dimensions[0] "country" is not a column of the VDM',
      'sections[0].charts[1].sort[0].field "x" is not a column or calculation of the VDM',
      'sections[0].charts[2].card.trend.field "Margin2" is not a column or calculation of the VDM',
      'sections[0].charts[2].card.trend.dateField "Margin" is a calculation of the VDM: use it with aggregation as-is',
      'sections[0].charts[3].bubble.sizeField "s" is not a column or calculation of the VDM',
      'sections[0].charts[3].bubble.yAxis.field "y" is not a column or calculation of the VDM',
    ]);
  });
});

describe('buildSections', () => {
  it('normalizes a chart with every default of docs/contract/api.md §2.4', () => {
    const [s] = buildSections(sections([{ name: 'A', charts: [{ type: 'column', measures: ['rev', { field: 'qty', aggregation: 'avg' }], dimensions: ['region', { field: 'day', isDate: true }] }] }]));
    expect(s).toEqual({
      name: 'A',
      topSection: false,
      category: false,
      charts: [
        {
          chartId: 'chart_1',
          title: '',
          type: 'CH00003',
          measures: [{ field: 'rev', aggregation: 'sum' }, { field: 'qty', aggregation: 'avg' }],
          dimensions: [{ field: 'region', isDate: false }, { field: 'day', isDate: true }],
          grid: { x: 0, y: 0, width: 12, height: 13 },
          display: DISPLAY,
          limit: 100,
        },
      ],
    });
  });

  it('applies limit 100 only without filters, keeps a given limit and display values, and fills trend defaults', () => {
    const [s] = buildSections(
      sections([
        {
          name: 'A',
          topSection: true,
          category: true,
          charts: [
            { type: 'table', measures: [], dimensions: [], filters: [{ field: 'region', op: '=', value: 'EU' }] },
            { type: 'table', measures: [], dimensions: [], filters: [] },
            { type: 'table', measures: [], dimensions: [], limit: 5, filters: [{ any: 1 }], display: { showTooltip: true, showValues: false } },
            { title: 'K', type: 'kpi-card', measures: ['rev'], dimensions: [], card: { icon: 'Cash', trend: { field: 'rev', dateField: 'day' } } },
          ],
        },
      ]),
    );
    expect([s.topSection, s.category]).toEqual([true, true]);
    expect(s.charts.map((c) => c.limit)).toEqual([undefined, 100, 5, 100]);
    expect('limit' in s.charts[0]).toBe(false);
    expect(s.charts[2].display).toEqual({ ...DISPLAY, showTooltip: true, showValues: false });
    expect(s.charts[3].card).toEqual({ icon: 'Cash', trend: { field: 'rev', dateField: 'day', interval: 'Month', format: 'percentage' } });
    expect(s.charts[3].type).toBe('CH00055');
    expect(s.charts[3].grid).toEqual({ x: 0, y: 0, width: 3, height: 6 });
  });

  it('numbers charts across sections and resolves drill-downs to chart IDs of the same section', () => {
    const built = buildSections(
      sections([
        { name: 'A', charts: [col({ title: 'Src' }), col({ title: 'T', drillDown: 'Src' })] },
        { name: 'B', charts: [col({ title: 'Src' }), col({ title: 'T', drillDown: 'Src', type: 'CH00014' })] },
      ]),
    );
    expect(built.map((s) => s.charts.map((c) => [c.chartId, c.type, c.drillDown, c.drillDownChartId]))).toEqual([
      [['chart_1', 'CH00003', undefined, undefined], ['chart_2', 'CH00003', 'Src', 'chart_1']],
      [['chart_3', 'CH00003', undefined, undefined], ['chart_4', 'CH00014', 'Src', 'chart_3']],
    ]);
  });

  it('keeps experiment IDs of sections that keep their name and chart IDs of charts that keep their title', () => {
    const previous = [
      { experimentId: 'E2026A00001', name: 'A', charts: [{ chartId: 'chart_1', title: 'One' }, { chartId: 'chart_2', title: 'Two' }] },
      { experimentId: 'E2026A00002', name: 'B', charts: [{ chartId: 'chart_3', title: 'Three' }] },
    ];
    const built = buildSections(
      sections([
        { name: 'B', charts: [col({ title: 'New' }), col({ title: 'Three' })] },
        { name: 'C', charts: [col({ title: 'Two' })] },
        { name: 'A', charts: [col({ title: 'One' }), col({ title: 'Other' })] },
      ]),
      previous,
    );
    expect(built.map((s) => [s.experimentId, s.name, s.charts.map((c) => c.chartId)])).toEqual([
      ['E2026A00002', 'B', ['chart_4', 'chart_3']],
      [undefined, 'C', ['chart_2']],
      ['E2026A00001', 'A', ['chart_1', 'chart_5']],
    ]);
  });

  it('keeps the single experiment of a renamed one-section dashboard', () => {
    const built = buildSections(sections([{ name: 'Renamed', charts: [col()] }]), [{ experimentId: 'E2026A00007', name: 'Old', charts: [] }]);
    expect(built[0].experimentId).toBe('E2026A00007');
  });
});
