// A table that becomes stacked label/value rows on narrow screens (admin.css `table.stack`).
import { h } from '../dom.js';

/**
 * columns: [{label, class?, hideLabel?}]; rows: [{cells: [node|string], attrs?}].
 * Every cell carries its column's label (data-label) for the narrow layout.
 * @param {{caption: string, columns: {label: string, class?: string, hideLabel?: boolean}[], rows: {cells: import('../types.js').Child[], attrs?: import('../types.js').Attrs}[], id?: string}} table
 */
export function dataTable({ caption, columns, rows, id }) {
  return h('div', { class: 'table-card' },
    h('table', { class: 'stack', id },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col', class: c.class }, c.hideLabel ? h('span', { class: 'visually-hidden' }, c.label) : c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', r.attrs ?? {}, r.cells.map((cell, i) => h('td', { class: columns[i]?.class, dataset: { label: columns[i]?.hideLabel ? '' : columns[i]?.label ?? '' } }, cell)))))));
}
