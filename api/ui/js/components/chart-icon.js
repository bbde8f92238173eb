// A small inline SVG per chart type, built with DOM APIs (no markup strings, no files): colours come
// from the CSS (classes `ci-a` accent, `ci-b` muted, `ci-l` lines), so dark mode needs nothing here.
import { CHART_TYPES } from '../dashboard-rules.js';

const SVG = 'http://www.w3.org/2000/svg';

/** The first friendly name of each CH code (`CH00011` → `horizontal-bar`). */
const NAMES = Object.entries(CHART_TYPES).reduce((m, [name, code]) => (m.has(code) ? m : m.set(code, name)), new Map());

/** A friendly name for a CH code or a friendly name (unknown types as they are). */
/** @param {string | null | undefined} type */
export function chartTypeName(type) {
  return NAMES.get(type) ?? (type && Object.hasOwn(CHART_TYPES, type) ? type : String(type ?? ''));
}

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attrs
 */
function el(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** @type {(x: number, y: number, w: number, hgt: number, cls?: string) => SVGElement} */
const rect = (x, y, w, hgt, cls = 'ci-a') => el('rect', { x, y, width: w, height: hgt, rx: 1, class: cls });
/** @type {(d: string, cls?: string) => SVGElement} */
const path = (d, cls = 'ci-l') => el('path', { d, class: cls });
/** @type {(cx: number, cy: number, r: number, cls?: string) => SVGElement} */
const circle = (cx, cy, r, cls = 'ci-a') => el('circle', { cx, cy, r, class: cls });

/** Arc path of a ring segment (for pie, donut, gauge, sunburst). */
/**
 * @param {number} cx
 * @param {number} cy
 * @param {number} r
 * @param {number} from
 * @param {number} to
 */
function arc(cx, cy, r, from, to) {
  /** @param {number} a */
  const p = (a) => [cx + r * Math.cos(a), cy + r * Math.sin(a)].map((n) => n.toFixed(2)).join(' ');
  return `M ${p(from)} A ${r} ${r} 0 ${to - from > Math.PI ? 1 : 0} 1 ${p(to)}`;
}

/** Shapes of a 24×24 drawing per family of chart types. */
/** @type {Record<string, () => SVGElement[]>} */
const FAMILIES = {
  kpi: () => [rect(2, 5, 20, 14, 'ci-b'), path('M6 15 L6 9 M9 15 V11 M12 15 V8', 'ci-l ci-thick'), path('M15 13 l2 -3 l2 2', 'ci-l ci-thick')],
  hbar: () => [rect(3, 4, 16, 3.5), rect(3, 10, 11, 3.5), rect(3, 16, 7, 3.5, 'ci-b')],
  column: () => [rect(4, 10, 3.5, 10), rect(10, 5, 3.5, 15), rect(16, 13, 3.5, 7, 'ci-b'), path('M2 21 H22')],
  stacked: () => [rect(4, 12, 4, 8), rect(4, 7, 4, 5, 'ci-b'), rect(10, 9, 4, 11), rect(10, 4, 4, 5, 'ci-b'), rect(16, 14, 4, 6), rect(16, 10, 4, 4, 'ci-b'), path('M2 21 H22')],
  line: () => [path('M3 17 L8 11 L13 14 L20 5', 'ci-l ci-thick ci-accent'), path('M2 21 H22')],
  area: () => [path('M3 20 L3 15 L8 10 L13 13 L21 6 L21 20 Z', 'ci-b ci-fill'), path('M3 15 L8 10 L13 13 L21 6', 'ci-l ci-thick ci-accent')],
  combo: () => [rect(4, 12, 3.5, 8, 'ci-b'), rect(10, 9, 3.5, 11, 'ci-b'), rect(16, 11, 3.5, 9, 'ci-b'), path('M4 10 L11 5 L18 8', 'ci-l ci-thick ci-accent')],
  pie: () => [el('path', { d: 'M12 12 L12 3 A9 9 0 1 1 3.6 15.2 Z', class: 'ci-a' }), el('path', { d: 'M12 12 L3.6 15.2 A9 9 0 0 1 12 3 Z', class: 'ci-b' })],
  donut: () => [path(arc(12, 12, 7.5, -Math.PI / 2, Math.PI * 0.9), 'ci-l ci-ring ci-accent'), path(arc(12, 12, 7.5, Math.PI * 0.9, Math.PI * 1.5), 'ci-l ci-ring ci-muted')],
  gauge: () => [path(arc(12, 16, 8, Math.PI, Math.PI * 2), 'ci-l ci-ring ci-muted'), path(arc(12, 16, 8, Math.PI, Math.PI * 1.6), 'ci-l ci-ring ci-accent'), path('M12 16 L16 10', 'ci-l ci-thick')],
  table: () => [rect(3, 4, 18, 4), rect(3, 10, 18, 3, 'ci-b'), rect(3, 15, 18, 3, 'ci-b'), path('M9 4 V18')],
  map: () => [path('M3 6 L9 4 L15 6 L21 4 V18 L15 20 L9 18 L3 20 Z', 'ci-b ci-fill'), path('M9 4 V18 M15 6 V20'), circle(15, 11, 2)],
  scatter: () => [circle(6, 16, 1.8), circle(10, 10, 1.8), circle(15, 13, 1.8, 'ci-b'), circle(18, 6, 1.8), path('M3 3 V21 H21')],
  bubble: () => [circle(8, 15, 4, 'ci-b'), circle(15, 9, 5), circle(18, 17, 2), path('M3 3 V21 H21')],
  radar: () => [path('M12 3 L20.5 9.2 L17.3 19 L6.7 19 L3.5 9.2 Z', 'ci-l'), path('M12 6 L18 10 L15 16 L8 17 L6 10 Z', 'ci-b ci-fill')],
  waterfall: () => [rect(3, 6, 3.5, 8), rect(8, 6, 3.5, 4, 'ci-b'), rect(13, 10, 3.5, 5), rect(18, 4, 3.5, 16), path('M2 21 H22')],
  sunburst: () => [circle(12, 12, 3.5), path(arc(12, 12, 7.5, 0, Math.PI * 1.2), 'ci-l ci-ring ci-accent'), path(arc(12, 12, 7.5, Math.PI * 1.25, Math.PI * 1.95), 'ci-l ci-ring ci-muted')],
  avatar: () => [circle(12, 9, 4), el('path', { d: 'M4 21 C4 15 20 15 20 21 Z', class: 'ci-b' })],
  trend: () => [path('M3 18 L9 12 L13 15 L21 6', 'ci-l ci-thick ci-accent'), path('M16 6 H21 V11', 'ci-l ci-thick ci-accent')],
  unknown: () => [rect(3, 3, 18, 18, 'ci-b'), path('M9 9 a3 3 0 1 1 3 3 v2 M12 17 v.5', 'ci-l ci-thick')],
};

/** @type {Record<string, string>} */
const FAMILY_OF = {
  CH00001: 'avatar', CH00002: 'hbar', CH00003: 'column', CH00005: 'donut', CH00006: 'combo', CH00007: 'gauge',
  CH00011: 'hbar', CH00013: 'area', CH00014: 'line', CH00015: 'map', CH00016: 'donut', CH00018: 'kpi',
  CH00019: 'pie', CH00021: 'pie', CH00022: 'radar', CH00024: 'scatter', CH00026: 'trend', CH00031: 'stacked',
  CH00032: 'table', CH00033: 'line', CH00034: 'sunburst', CH00040: 'bubble', CH00055: 'kpi', CH00064: 'waterfall',
};

/**
 * The icon of a chart type (CH code or friendly name), decorative (`aria-hidden`): the type's
 * name is always written next to it.
 * @param {string} type
 * @param {{size?: number}} [options]
 */
export function chartIcon(type, { size = 24 } = {}) {
  const code = CHART_TYPES[type] ?? type;
  const family = FAMILY_OF[code] ?? 'unknown';
  const svg = el('svg', { viewBox: '0 0 24 24', width: size, height: size, class: `chart-icon ci-${family}`, 'aria-hidden': 'true', focusable: 'false' });
  svg.dataset.family = family;
  for (const shape of FAMILIES[family]()) svg.append(shape);
  return svg;
}
