// Draws a dashboard from its stored grid: sections as tabs, KPI cards and charts placed at their
// x/y/width/height on a 12-column CSS grid, with type icon, title, fields and drill-down links.
import { h } from '../dom.js';
import { autoLayout, DEFAULT_AGGREGATION, GRID_COLUMNS, KPI_CODE, resolveChartType } from '../dashboard-rules.js';
import { chartIcon, chartTypeName } from './chart-icon.js';

/**
 * A chart as drawn: a stored one (ApiStoredChart, placed by the applier: its grid is complete) or
 * the wizard's preview of one (placed by the same rules).
 * @typedef {Pick<import('../types.js').ApiStoredChart, 'chartId' | 'title' | 'type' | 'drillDownChartId'> & {
 *   measures: {field: string, aggregation?: string}[], dimensions: {field: string}[],
 *   grid: {x: number, y: number, width: number, height: number}}} LayoutChart
 */
/** @typedef {{name: string, charts: LayoutChart[]}} LayoutSection */
/**
 * @typedef {object} LayoutOptions
 * @property {string} [section] the section to show first
 * @property {string} [chart] the chart to show first (a drill-down link's target)
 * @property {(section: LayoutSection, chart: LayoutChart | undefined) => void} [onDrill]
 * @property {(section: LayoutSection, chart: LayoutChart | undefined) => string} [href]
 * @property {string} [idPrefix]
 */

/**
 * A chart of an onboarding package as sent (before validation fills in its defaults).
 * @typedef {{title?: string, type: string, measures?: (string | {field: string, aggregation?: string})[],
 *   dimensions?: (string | {field: string})[], grid?: import('../types.js').DashboardGrid, drillDown?: string}} PreviewChart
 */
/** @typedef {{name?: string, sections?: {name?: string, charts?: PreviewChart[]}[], charts?: PreviewChart[]}} PreviewSpec */

let seq = 0;

/** @param {LayoutChart['measures'][number]} m */
const fieldText = (m) => (m.aggregation && m.aggregation !== 'as-is' ? `${m.aggregation}(${m.field})` : m.field);

/**
 * `dashboard`: `{facadeId?, name, sections: [{name, charts: [{chartId, title, type, measures,
 * dimensions, grid, drillDownChartId?}]}]}` (GET /v1/sdk/dashboards/{facadeId}'s `dashboard`).
 * `section` / `chart`: what to show first (a drill-down link's target). `onDrill(section, chart)`:
 * called when a drill-down link is followed; without it the links only move within the drawing.
 * `href(section, chart)`: the address of a drill-down target (links are plain buttons without it).
 * @param {{name?: string, sections?: LayoutSection[]}} dashboard
 * @param {LayoutOptions} [options]
 */
export function dashboardLayout(dashboard, { section, chart, onDrill, href, idPrefix } = {}) {
  const prefix = idPrefix ?? `dl${++seq}`;
  const sections = dashboard.sections ?? [];
  const root = h('div', { class: 'dash-layout', dataset: { sections: String(sections.length) } });
  if (sections.length === 0) {
    root.append(h('p', { class: 'empty' }, 'This dashboard has no sections.'));
    return root;
  }
  /** @type {Map<string, number>} */
  const where = new Map(); // chartId → section index
  sections.forEach((s, i) => (s.charts ?? []).forEach((c) => where.set(c.chartId, i)));
  let current = Math.max(0, sections.findIndex((s) => s.name === section));
  if (chart && where.has(chart) && section === undefined) current = where.get(chart) ?? current;

  const tabs = sections.map((s, i) =>
    h('button', {
      type: 'button', role: 'tab', id: `${prefix}-tab-${i}`, 'aria-controls': `${prefix}-panel-${i}`, class: 'dash-tab',
      dataset: { section: s.name },
    }, s.name, h('span', { class: 'count' }, String((s.charts ?? []).length))));
  const panels = sections.map((s, i) => {
    const panel = h('div', { role: 'tabpanel', id: `${prefix}-panel-${i}`, 'aria-labelledby': `${prefix}-tab-${i}`, tabindex: '0', class: 'dash-panel' });
    panel.append(sectionGrid(s, sections, { prefix, where, drill }));
    return panel;
  });
  const tablist = h('div', { role: 'tablist', 'aria-label': `Sections of ${dashboard.name ?? 'the dashboard'}`, class: 'dash-tabs' }, tabs);

  /**
   * @param {number} i
   * @param {{focus?: boolean}} [options]
   */
  function select(i, { focus = false } = {}) {
    current = i;
    tabs.forEach((t, j) => {
      t.setAttribute('aria-selected', String(j === i));
      t.tabIndex = j === i ? 0 : -1;
      panels[j].hidden = j !== i;
    });
    if (focus) tabs[i].focus();
  }

  /** @param {string} targetChartId */
  function drill(targetChartId) {
    const i = where.get(targetChartId);
    if (i === undefined) return;
    select(i);
    /** @type {HTMLElement | null} */
    const tile = panels[i].querySelector(`[data-chart-id="${CSS.escape(targetChartId)}"]`);
    root.querySelectorAll('.tile.highlight').forEach((t) => t.classList.remove('highlight'));
    if (tile) {
      tile.classList.add('highlight');
      tile.focus();
    }
    onDrill?.(sections[i], sections[i].charts.find((c) => c.chartId === targetChartId));
  }
  // Links carry a real address when the page can serve one; following one stays in the drawing.
  root.addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('[data-drill]') : null;
    if (!(a instanceof HTMLElement) || !root.contains(a)) return;
    e.preventDefault();
    drill(a.dataset.drill ?? '');
  });

  tablist.addEventListener('keydown', (e) => {
    /** @type {Record<string, number>} */
    const keys = { ArrowRight: current + 1, ArrowLeft: current - 1, Home: 0, End: tabs.length - 1 };
    if (!(e.key in keys)) return;
    e.preventDefault();
    select((keys[e.key] + tabs.length) % tabs.length, { focus: true });
  });
  tabs.forEach((t, i) => t.addEventListener('click', () => select(i)));

  root.append(tablist, ...panels);
  select(current);
  // Drill-down anchors get their addresses once the sections are known.
  if (href) {
    for (const a of root.querySelectorAll('a[data-drill]')) {
      if (!(a instanceof HTMLAnchorElement)) continue;
      const i = where.get(a.dataset.drill ?? '');
      if (i === undefined) continue;
      a.href = href(sections[i], sections[i].charts.find((c) => c.chartId === a.dataset.drill));
    }
  }
  if (chart && where.has(chart)) queueMicrotask(() => drill(chart));
  return root;
}

/**
 * One section's grid: every chart placed at its stored grid; rows as tall as the grid's units.
 * @param {LayoutSection} section
 * @param {LayoutSection[]} _sections
 * @param {{prefix: string, where: Map<string, number>, drill: (chartId: string) => void}} context
 */
function sectionGrid(section, _sections, { prefix }) {
  const charts = [...(section.charts ?? [])];
  // Reading order (top to bottom, left to right) is the order on a narrow screen and for a screen reader.
  charts.sort((a, b) => a.grid.y - b.grid.y || a.grid.x - b.grid.x);
  const rows = charts.reduce((m, c) => Math.max(m, c.grid.y + c.grid.height), 0);
  const grid = h('div', { class: 'dash-grid', dataset: { columns: String(GRID_COLUMNS), rows: String(rows) } });
  if (charts.length === 0) {
    grid.append(h('p', { class: 'empty' }, 'No charts in this section.'));
    return grid;
  }
  const byId = new Map(charts.map((c) => [c.chartId, c]));
  for (const c of charts) grid.append(tile(c, { prefix, byId, drilledFrom: charts.filter((o) => o.drillDownChartId === c.chartId) }));
  return grid;
}

/**
 * @param {LayoutChart} c
 * @param {{prefix: string, byId: Map<string, LayoutChart>, drilledFrom: LayoutChart[]}} context
 */
function tile(c, { prefix, byId, drilledFrom }) {
  const kpi = c.type === KPI_CODE || c.type === 'CH00018';
  const g = c.grid;
  const titleId = `${prefix}-${c.chartId}-title`;
  const measures = (c.measures ?? []).map(fieldText);
  const dimensions = (c.dimensions ?? []).map((d) => d.field);
  const source = c.drillDownChartId ? byId.get(c.drillDownChartId) : undefined;
  const el = h('article', {
    class: `tile${kpi ? ' kpi' : ''}`, tabindex: '-1', 'aria-labelledby': titleId,
    dataset: { chartId: c.chartId, x: String(g.x), y: String(g.y), w: String(g.width), hgt: String(g.height), type: c.type },
  },
  h('header', { class: 'tile-head' },
    chartIcon(c.type),
    h('h3', { id: titleId }, c.title || 'Untitled chart'),
    h('span', { class: 'tile-type' }, chartTypeName(c.type))),
  h('dl', { class: 'tile-fields' },
    measures.length ? [h('dt', {}, kpi ? 'Value' : 'Measures'), h('dd', {}, measures.join(', '))] : null,
    dimensions.length ? [h('dt', {}, 'By'), h('dd', {}, dimensions.join(', '))] : null),
  h('div', { class: 'tile-art', 'aria-hidden': 'true' }, chartIcon(c.type, { size: kpi ? 28 : 56 })),
  drilledFrom.length || source
    ? h('ul', { class: 'tile-drill' },
        drilledFrom.map((t) => h('li', {}, h('a', { href: '#', class: 'drill', dataset: { drill: t.chartId } }, `Drill down: ${t.title || t.chartId}`))),
        source ? h('li', { class: 'muted' }, 'Drill-down of ', h('a', { href: '#', dataset: { drill: source.chartId } }, source.title || source.chartId)) : null)
    : null,
  h('div', { class: 'tile-pos muted' }, `x ${g.x} · y ${g.y} · ${g.width}×${g.height}`));
  // Placement through the CSSOM (the CSP allows no style attributes).
  el.style.gridColumn = `${g.x + 1} / span ${Math.min(g.width, GRID_COLUMNS)}`;
  el.style.gridRow = `${g.y + 1} / span ${g.height}`;
  return el;
}

/**
 * The drawing of an onboarding package's dashboard before it exists (the wizard's preview):
 * chart types resolved and the grid placed by the applier's own rules (dashboard-rules.js is
 * generated from the controller's layout and catalogue), IDs `preview_<n>`.
 * @param {PreviewSpec} spec
 * @param {LayoutOptions} [opts]
 */
export function dashboardPreview(spec, opts = {}) {
  let n = 0;
  const sections = (spec.sections ?? (spec.charts ? [{ name: spec.name, charts: spec.charts }] : [])).map((s, i) => {
    const charts = s.charts ?? [];
    const codes = charts.map((c) => resolveChartType(c.type) ?? c.type);
    const grids = autoLayout(charts.map((c, k) => ({ kpi: codes[k] === KPI_CODE, grid: c.grid })));
    const ids = charts.map(() => `preview_${++n}`);
    /** @type {Map<string, string>} */
    const byTitle = new Map();
    charts.forEach((c, k) => c.title && !byTitle.has(c.title) && byTitle.set(c.title, ids[k]));
    return {
      name: s.name ?? `Section ${i + 1}`,
      charts: charts.map((c, k) => ({
        chartId: ids[k],
        title: c.title ?? '',
        type: codes[k],
        measures: (c.measures ?? []).map((m) => (typeof m === 'string' ? { field: m, aggregation: DEFAULT_AGGREGATION } : { field: m.field, aggregation: m.aggregation ?? DEFAULT_AGGREGATION })),
        dimensions: (c.dimensions ?? []).map((d) => (typeof d === 'string' ? { field: d } : { field: d.field })),
        grid: grids[k],
        ...(c.drillDown && byTitle.has(c.drillDown) ? { drillDownChartId: byTitle.get(c.drillDown) } : {}),
      })),
    };
  });
  const drawing = dashboardLayout({ name: spec.name, sections }, opts);
  drawing.classList.add('preview');
  return drawing;
}
