// Term–value lists: `facts` as a two-column grid (a card), `inlineFacts` as a wrapping row of pairs
// (each pair kept together, so a narrow screen never splits a label from its value).
import { h } from '../dom.js';

/** @typedef {readonly [label: string, value: import('../types.js').Child, cls?: string]} Fact */

/**
 * `rows`: `[label, value, class?]`, falsy rows skipped; a missing value shows as "—".
 * @param {(Fact | null | false | undefined | '')[]} rows
 * @param {import('../types.js').Attrs} [attrs]
 */
export function facts(rows, attrs = {}) {
  return h('dl', { class: 'facts', ...attrs }, rows.filter((r) => !!r).flatMap(([k, v, cls]) => [h('dt', {}, k), h('dd', { class: cls ?? '' }, v ?? '—')]));
}

/**
 * @param {(Fact | null | false | undefined | '')[]} rows
 * @param {import('../types.js').Attrs} [attrs]
 */
export function inlineFacts(rows, attrs = {}) {
  return h('dl', { class: 'facts-inline', ...attrs }, rows.filter((r) => !!r).map(([k, v, cls]) => h('div', { class: 'fact' }, h('dt', {}, k), h('dd', { class: cls ?? '' }, v ?? '—'))));
}
