import { call, userPath } from '../api.js';
import { announce, field, h, notice, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, errorText, loadInto } from '../components/async-view.js';
import { fmtDuration, scheduleText, when } from '../components/ops-format.js';
import { pollWhileShown } from '../components/poll.js';
import { ACTIVE_RUN, statusBadge } from '../components/status-badge.js';

/** @typedef {import('../types.js').ApiPipelineSummary} PipelineSummary */
/** @typedef {{flash: HTMLElement, refresh: () => Promise<void>}} ListContext */

/**
 * The last run in one cell: status, when it started, how long it took.
 * @param {import('../types.js').ApiPipelineRun | null} run
 * @param {{link?: boolean}} [options]
 */
export function lastRunCell(run, { link = true } = {}) {
  if (!run) return h('span', { class: 'muted' }, 'Never run');
  return h('span', { class: 'run-cell' },
    link ? h('a', { href: `#/runs/${encodeURIComponent(run.runId)}`, 'aria-label': `Run ${run.runId}: ${run.status}` }, statusBadge(run.status)) : statusBadge(run.status),
    ' ', when(run.startedAt ?? run.queuedAt),
    run.durationMs !== null ? h('span', { class: 'muted' }, ` · ${fmtDuration(run.durationMs)}`) : null);
}

/** @param {string | null | undefined} owner */
export const ownerCell = (owner) => (owner ? h('a', { href: `#/clients/${encodeURIComponent(owner)}` }, owner) : h('span', { class: 'muted', title: 'Its connections belong to different clients (or none): admins only' }, 'No single client'));

/** Pipelines: every pipeline with its client, schedule, last and next run; filter by name or client. */
/** @param {URLSearchParams} [query] */
export function pipelinesPage(query) {
  const box = h('div', { id: 'pipelines' });
  const filter = h('input', { type: 'search', name: 'q', value: query?.get('q') ?? '', placeholder: 'Name, ID or client', autocomplete: 'off' });
  /** @type {PipelineSummary[]} */
  let latest = [];
  const flash = h('div', { id: 'pipelines-flash', 'aria-live': 'polite' });
  /** @returns {Promise<PipelineSummary[]>} */
  const read = async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiPipelineList>} */
    const r = await call('GET', userPath('/v1/bi/admin/pipelines/'));
    return r.body.pipelines;
  };
  const refresh = async () => {
    latest = await read();
    paint();
  };
  // A redraw keeps keyboard focus on the row button that had it (the table follows active runs).
  const paint = () => {
    const had = document.activeElement instanceof HTMLElement && box.contains(document.activeElement) ? document.activeElement.id : null;
    render(box, view(latest, filter.value.trim().toLowerCase(), { flash, refresh }));
    if (had) document.getElementById(had)?.focus();
  };
  filter.addEventListener('input', paint);
  const reload = loadInto(box, read, (list) => {
    latest = list;
    return view(list, filter.value.trim().toLowerCase(), { flash, refresh });
  }, { what: 'pipelines' });
  // While a run is active, its row follows it (every 3 s).
  pollWhileShown(box, 3000, async () => {
    if (!latest.some((p) => p.lastRun && ACTIVE_RUN.includes(p.lastRun.status))) return true;
    await refresh();
    return true;
  });
  return h('section', { 'aria-labelledby': 'pipelines-h' },
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', { id: 'pipelines-h' }, 'Pipelines'), h('p', { class: 'muted lead' }, 'Data pipelines defined by manifests: their schedules and runs.')),
      h('button', { type: 'button', class: 'secondary', onclick: () => void reload() }, 'Refresh')),
    h('form', { class: 'panel row filters', role: 'search', onsubmit: (e) => e.preventDefault() }, h('div', { class: 'grow' }, field('Filter', filter))),
    flash,
    box);
}

/**
 * @param {PipelineSummary[]} list
 * @param {string} q
 * @param {ListContext} context
 */
function view(list, q, { flash, refresh }) {
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
      columns: [{ label: 'Pipeline' }, { label: 'Client' }, { label: 'Schedule' }, { label: 'Enabled' }, { label: 'Last run' }, { label: 'Next run' }, { label: 'Actions', hideLabel: true }],
      rows: shown.map((p) => ({
        attrs: { dataset: { pipeline: p.pipelineId } },
        cells: [
          h('div', { class: 'name-cell' }, h('a', { href: `#/pipelines/${encodeURIComponent(p.pipelineId)}`, class: 'strong' }, p.name), h('span', { class: 'mono muted small' }, p.pipelineId)),
          ownerCell(p.owner),
          scheduleText(p.schedule),
          p.schedule ? statusBadge(p.schedule.isEnabled ? 'enabled' : 'off', p.schedule.isEnabled ? 'Enabled' : 'Disabled') : statusBadge('off', 'Manual'),
          lastRunCell(p.lastRun),
          p.nextRunAt ? when(p.nextRunAt) : h('span', { class: 'muted' }, '—'),
          runButton(p, { flash, refresh }),
        ],
      })),
    }));
}

/** Run now from the list: a new run (refused while one is active, said so), then a link to watch it. */
/**
 * @param {PipelineSummary} p
 * @param {ListContext} context
 */
function runButton(p, { flash, refresh }) {
  const active = Boolean(p.lastRun && ACTIVE_RUN.includes(p.lastRun.status));
  const button = h('button', { type: 'button', class: 'secondary', id: `run-${p.pipelineId}`, 'data-action': 'run', 'aria-label': `Run ${p.name} now`, 'aria-disabled': active ? 'true' : null, title: active ? 'A run is already active' : null }, 'Run now');
  button.addEventListener('click', async () => {
    if (button.getAttribute('aria-disabled') === 'true') return;
    button.setAttribute('aria-disabled', 'true');
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiPipelineRunAnswer>} */
      const r = await call('POST', userPath(`/v1/sdk/pipelines/${encodeURIComponent(p.pipelineId)}/runs/`), { expect: [202, 409] });
      if (r.status === 409) render(flash, notice('warn', h('strong', {}, 'Not started. '), /** @type {import('../types.js').ErrorAnswer | null} */ (r.body)?.message ?? 'This pipeline already has an active run.'));
      else {
        const run = r.body.run;
        render(flash, notice('ok', `Run ${run.runId} of ${p.name} started. `, h('a', { href: `#/runs/${encodeURIComponent(run.runId)}`, id: 'watch-list-run' }, 'Watch it live')));
        announce(`Run ${run.runId} started`);
      }
    } catch (err) {
      render(flash, notice('bad', h('strong', {}, 'Could not start a run. '), errorText(err)));
    }
    await refresh().catch(() => {});
  });
  return h('div', { class: 'row-actions' }, button);
}
