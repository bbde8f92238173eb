import { call } from '../api.js';
import { h } from '../dom.js';
import { emptyState } from '../components/async-view.js';
import { dataTable } from '../components/data-table.js';
import { polledView, stateBadge } from '../components/fleet.js';
import { when } from '../components/ops-format.js';

/** Heartbeats come every 10 s: reading every 5 s keeps the ages and states current. */
const POLL_MS = 5000;
const enc = encodeURIComponent;

/**
 * Workers (`#/workers`): the `bictl worker` processes of queue mode with their heartbeat, state,
 * concurrency and the runs they are running (links to the run pages). Read again every few seconds
 * and patched in place. In-process mode (no BI_QUEUE_URL) has none: the empty state says so.
 */
export function workersPage() {
  const load = async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiWorkerList>} */
    const r = await call('GET', '/v1/reconciler/workers');
    return r.body;
  };
  const region = polledView({ load, draw: view, label: 'workers', id: 'workers', ms: POLL_MS });
  return h('section', { 'aria-labelledby': 'workers-h', class: 'fleet' },
    h('div', { class: 'page-head' },
      h('div', { class: 'title-block' },
        h('h1', { id: 'workers-h' }, 'Workers'),
        h('p', { class: 'muted lead' }, 'The processes that execute pipeline runs taken from the queue, with their last heartbeat and what they are running.'))),
    region);
}

/** @param {import('../types.js').ApiWorkerList} body */
function view(body) {
  const workers = body.workers;
  if (!workers.length) {
    const queue = body.mode === 'queue';
    return h('div', { id: 'workers-empty' }, emptyState(queue ? 'No worker is up' : 'Runs execute inside the controller',
      queue
        ? 'The controller is in queue mode (BI_QUEUE_URL) but no worker has reported in the last hour: runs wait queued until one starts. Start one with bictl worker (BI_QUEUE_URL, BI_CONTROLLER_URL, BI_WORKER_TOKEN).'
        : 'No workers: the controller runs pipelines itself (in-process mode, the default). Set BI_QUEUE_URL to a PostgreSQL database and start bictl worker processes to run them on other machines.'));
  }
  const up = workers.filter((w) => w.state === 'up').length;
  return h('div', {},
    h('p', { class: 'muted count', id: 'workers-count' }, `${up} of ${workers.length} worker${workers.length === 1 ? '' : 's'} up`),
    dataTable({
      caption: 'Workers',
      id: 'worker-table',
      columns: [{ label: 'Worker' }, { label: 'Version' }, { label: 'State' }, { label: 'Last heartbeat' }, { label: 'Concurrency', class: 'num' }, { label: 'Running' }],
      rows: workers.map((w) => ({
        attrs: { dataset: { key: w.name, worker: w.name, state: w.state } },
        cells: [
          h('span', { class: 'mono strong' }, w.name),
          h('span', { class: 'mono' }, w.version),
          stateBadge(w.state),
          when(w.heartbeatAt),
          String(w.concurrency),
          w.running.length
            ? h('div', {}, h('span', { class: 'small muted' }, `${w.running.length} of ${w.concurrency}: `), h('ul', { class: 'plain inline' }, w.running.map((id) => h('li', {}, h('a', { href: `#/runs/${enc(id)}`, class: 'mono' }, id)))))
            : h('span', { class: 'muted' }, 'idle'),
        ],
      })),
    }));
}
