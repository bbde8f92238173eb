import { call } from '../api.js';
import { h } from '../dom.js';
import { emptyState } from '../components/async-view.js';
import { dataTable } from '../components/data-table.js';
import { polledView, stateBadge } from '../components/fleet.js';
import { count, when } from '../components/ops-format.js';

const POLL_MS = 10_000;

/**
 * Notifiers (`#/notifiers`): each applied Notifier manifest and how its deliveries went — counts of
 * delivered and failed, the last event, the last result and its error. Read again every few seconds.
 */
export function notifiersPage() {
  const load = async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiNotifierDeliveries>} */
    const r = await call('GET', '/v1/reconciler/notifiers');
    return r.body.notifiers;
  };
  const region = polledView({ load, draw: view, label: 'notifiers', id: 'notifiers', ms: POLL_MS });
  return h('section', { 'aria-labelledby': 'notifiers-h', class: 'fleet' },
    h('div', { class: 'page-head' },
      h('div', { class: 'title-block' },
        h('h1', { id: 'notifiers-h' }, 'Notifiers'),
        h('p', { class: 'muted lead' }, 'Where the controller sends its events (failed reconciles, failed runs, paused rollouts) and how the deliveries went.'))),
    region);
}

/** @param {import('../types.js').ApiNotifierDelivery[]} list */
function view(list) {
  if (!list.length) {
    return h('div', { id: 'notifiers-empty' }, emptyState('No notifiers', 'Notifiers come from manifests of kind Notifier (for example notifiers/ops.yaml): a webhook and the events it receives. See docs/console.md.'));
  }
  return dataTable({
    caption: 'Notifiers and their deliveries',
    id: 'notifier-table',
    columns: [{ label: 'Notifier' }, { label: 'Type' }, { label: 'Last delivery' }, { label: 'Delivered', class: 'num' }, { label: 'Failed', class: 'num' }, { label: 'Last error' }],
    rows: list.map((n) => ({
      attrs: { dataset: { key: n.name, notifier: n.name, result: n.lastResult ?? 'none' } },
      cells: [
        h('span', { class: 'strong' }, n.name),
        h('span', { class: 'tag' }, n.type),
        n.lastResult
          ? h('div', { class: 'name-cell' }, h('span', {}, stateBadge(n.lastResult), ' ', when(n.lastAttemptAt)), n.lastEvent ? h('span', { class: 'small muted' }, `event ${n.lastEvent}`) : null)
          : h('span', { class: 'muted' }, 'Nothing sent yet'),
        count(n.delivered),
        n.failed ? h('span', { class: 'bad-text strong' }, count(n.failed)) : '0',
        n.lastError ? h('span', { class: 'small wrap bad-text' }, n.lastError) : h('span', { class: 'muted' }, '—'),
      ],
    })),
  });
}
