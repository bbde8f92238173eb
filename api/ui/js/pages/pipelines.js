import { call, userPath } from '../api.js';
import { field, h, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, loadInto } from '../components/async-view.js';
import { fmtDuration, scheduleText, when } from '../components/ops-format.js';
import { pollWhileShown } from '../components/poll.js';
import { ACTIVE_RUN, statusBadge } from '../components/status-badge.js';

/** The last run in one cell: status, when it started, how long it took. */
export function lastRunCell(run, { link = true } = {}) {
  if (!run) return h('span', { class: 'muted' }, 'Never run');
  return h('span', { class: 'run-cell' },
    link ? h('a', { href: `#/runs/${encodeURIComponent(run.runId)}`, 'aria-label': `Run ${run.runId}: ${run.status}` }, statusBadge(run.status)) : statusBadge(run.status),
    ' ', when(run.startedAt ?? run.queuedAt),
    run.durationMs !== null ? h('span', { class: 'muted' }, ` · ${fmtDuration(run.durationMs)}`) : null);
}

export const ownerCell = (owner) => (owner ? h('a', { href: `#/clients/${encodeURIComponent(owner)}` }, owner) : h('span', { class: 'muted', title: 'Its connections belong to different clients (or none): admins only' }, 'No single client'));

/** Pipelines: every pipeline with its client, schedule, last and next run; filter by name or client. */
export function pipelinesPage(query) {
  const box = h('div', { id: 'pipelines' });
  const filter = h('input', { type: 'search', name: 'q', value: query?.get('q') ?? '', placeholder: 'Name, ID or client', autocomplete: 'off' });
  let latest = [];
  const paint = () => render(box, view(latest, filter.value.trim().toLowerCase()));
  filter.addEventListener('input', paint);
  const reload = loadInto(box, async () => (await call('GET', userPath('/v1/bi/admin/pipelines/'))).body.pipelines, (list) => {
    latest = list;
    return view(list, filter.value.trim().toLowerCase());
  }, { what: 'pipelines' });
  // While a run is active, its row follows it (every 3 s).
  pollWhileShown(box, 3000, async () => {
    if (!latest.some((p) => p.lastRun && ACTIVE_RUN.includes(p.lastRun.status))) return true;
    latest = (await call('GET', userPath('/v1/bi/admin/pipelines/'))).body.pipelines;
    paint();
    return true;
  });
  return h('section', { 'aria-labelledby': 'pipelines-h' },
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', { id: 'pipelines-h' }, 'Pipelines'), h('p', { class: 'muted lead' }, 'Data pipelines defined by manifests: their schedules and runs.')),
      h('button', { type: 'button', class: 'secondary', onclick: () => void reload() }, 'Refresh')),
    h('form', { class: 'panel row filters', role: 'search', onsubmit: (e) => e.preventDefault() }, h('div', { class: 'grow' }, field('Filter', filter))),
    box);
}

function view(list, q) {
  if (!list.length) {
    return emptyState('No pipelines yet', 'Add a Pipeline manifest under pipelines/ in the manifests folder, or import one with POST /v1/sdk/import-pipeline; it appears here after the next sync.');
  }
  const shown = q ? list.filter((p) => `${p.name} ${p.pipelineId} ${p.owner ?? ''}`.toLowerCase().includes(q)) : list;
  if (!shown.length) return emptyState('No pipeline matches', `Nothing matches “${q}”.`);
  return h('div', {},
    h('p', { class: 'muted count', 'aria-live': 'polite' }, `${shown.length} of ${list.length} pipeline${list.length === 1 ? '' : 's'}`),
    dataTable({
      caption: 'Pipelines',
      id: 'pipeline-table',
      columns: [{ label: 'Pipeline' }, { label: 'Client' }, { label: 'Schedule' }, { label: 'Enabled' }, { label: 'Last run' }, { label: 'Next run' }],
      rows: shown.map((p) => ({
        attrs: { dataset: { pipeline: p.pipelineId } },
        cells: [
          h('div', { class: 'name-cell' }, h('a', { href: `#/pipelines/${encodeURIComponent(p.pipelineId)}`, class: 'strong' }, p.name), h('span', { class: 'mono muted small' }, p.pipelineId)),
          ownerCell(p.owner),
          scheduleText(p.schedule),
          p.schedule ? statusBadge(p.schedule.isEnabled ? 'enabled' : 'off', p.schedule.isEnabled ? 'Enabled' : 'Disabled') : statusBadge('off', 'Manual'),
          lastRunCell(p.lastRun),
          p.nextRunAt ? when(p.nextRunAt) : h('span', { class: 'muted' }, '—'),
        ],
      })),
    }));
}
