// An object's desired-vs-applied difference as a table: one row per leaf that differs.
import { h } from '../dom.js';
import { dataTable } from './data-table.js';

/** A value as the diff shows it: JSON, or "(absent)" for a side that does not have the field. */
/**
 * @param {unknown} v
 * @param {boolean} present
 */
export function diffValue(v, present) {
  if (!present) return h('span', { class: 'muted' }, '(absent)');
  return h('code', { class: 'wrap' }, JSON.stringify(v));
}

/**
 * `changes` = [{path, from?, to?}] (applied → desired).
 * @param {import('../types.js').ApiFieldChange[]} changes
 * @param {{id?: string, caption?: string}} [options]
 */
export function manifestDiff(changes, { id = 'object-diff', caption = 'Fields that differ: applied → desired' } = {}) {
  return dataTable({
    caption,
    id,
    columns: [{ label: 'Field' }, { label: 'Applied (in the store)' }, { label: 'Desired (from the source)' }],
    rows: changes.map((c) => ({
      attrs: { dataset: { path: c.path } },
      cells: [h('code', { class: 'wrap' }, c.path || '(whole object)'), diffValue(c.from, 'from' in c), diffValue(c.to, 'to' in c)],
    })),
  });
}

/** A manifest as indented JSON text (what the reconciler holds; credentials already redacted by the server). */
/**
 * @param {unknown} m
 * @param {string} id
 */
export function manifestText(m, id) {
  return h('pre', { class: 'manifest-text', id, tabindex: '0', 'aria-label': 'Manifest' }, JSON.stringify(m, null, 2));
}
