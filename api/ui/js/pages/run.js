import { call, userPath } from '../api.js';
import { announce, confirmDialog, fmtDate, h, notice, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, errorText, loadInto } from '../components/async-view.js';
import { count, fmtDuration, when } from '../components/ops-format.js';
import { pollWhileShown } from '../components/poll.js';
import { ACTIVE_RUN, statusBadge } from '../components/status-badge.js';

const REJECTS_PAGE = 10;
const POLL_MS = 1000;
const runPath = (runId, tail = '') => userPath(`/v1/sdk/pipeline-runs/${encodeURIComponent(runId)}${tail}/`);

/**
 * A run: totals, the step table with counts and timings (updated every second while the run is
 * queued or running), its rejected rows (paged), its log, and Cancel while it is active.
 */
export function runPage(runId) {
  const box = h('div', { id: 'run' });
  loadInto(box, async () => {
    const [run, pipeline] = await call('GET', runPath(runId)).then(async (r) => [
      r.body.run,
      await call('GET', userPath(`/v1/sdk/pipelines/${encodeURIComponent(r.body.run.pipelineId)}/`), { expect: [200, 404] }).then((p) => (p.status === 200 ? p.body.data : null)),
    ]);
    return { run, pipeline };
  }, (data) => live(data), { what: 'the run' });
  return h('section', { 'aria-labelledby': 'run-h' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb', id: 'run-crumbs' }, h('a', { href: '#/pipelines' }, 'Pipelines'), ' / ', h('span', { class: 'mono' }, runId)),
    h('h1', { id: 'run-h' }, `Run ${runId}`),
    box);
}

/** Totals while running come from the steps (the run's own totals are written when it ends). */
function totals(run) {
  if (!ACTIVE_RUN.includes(run.status)) return { read: run.rowsRead, written: run.rowsWritten, rejected: run.rowsRejected };
  const source = run.steps.find((s) => s.type === 'source');
  const load = [...run.steps].reverse().find((s) => s.type === 'load');
  return { read: source?.rowsOut ?? 0, written: load?.rowsOut ?? 0, rejected: run.steps.reduce((n, s) => n + s.rowsRejected, 0) };
}

function live({ run: first, pipeline }) {
  let run = first;
  const crumbs = document.getElementById('run-crumbs');
  if (crumbs && pipeline) render(crumbs, h('a', { href: '#/pipelines' }, 'Pipelines'), ' / ', h('a', { href: `#/pipelines/${encodeURIComponent(pipeline.pipelineId)}` }, pipeline.name), ' / ', h('span', { class: 'mono' }, run.runId));
  const head = h('div', { class: 'summary-bar', id: 'run-head' });
  const stats = h('div', { class: 'stats', id: 'run-stats' });
  const steps = h('div', { id: 'run-steps' });
  const error = h('div', { id: 'run-error' });
  const actionStatus = h('div', { 'aria-live': 'polite' });
  const rejects = h('div', { id: 'rejects' });
  const logs = h('div', { id: 'logs' });
  const liveNote = h('p', { class: 'live-note', id: 'live-note', 'aria-live': 'off' });
  let rejectsOffset = 0;
  let lastStatus = run.status;

  const cancel = h('button', { type: 'button', class: 'danger', id: 'cancel-run' }, 'Cancel run');
  cancel.addEventListener('click', async () => {
    const yes = await confirmDialog({
      title: `Cancel run ${run.runId}?`,
      text: 'The run stops at its next batch. A cancelled run loads nothing: the destination stays exactly as it was.',
      confirmLabel: 'Cancel run',
      cancelLabel: 'Keep running',
      danger: true,
    });
    if (!yes) return;
    cancel.disabled = true;
    try {
      run = (await call('POST', runPath(run.runId, '/cancel'), { expect: [202] })).body.run;
      render(actionStatus, notice('ok', `Cancel requested for ${run.runId}.`));
      paint();
    } catch (err) {
      render(actionStatus, notice('bad', h('strong', {}, 'Could not cancel. '), errorText(err)));
      cancel.disabled = false;
    }
  });

  const paint = () => {
    const active = ACTIVE_RUN.includes(run.status);
    const t = totals(run);
    render(head,
      h('div', { class: 'facts-inline' },
        statusBadge(run.status),
        h('span', {}, 'Trigger ', h('strong', {}, run.trigger)),
        h('span', {}, 'Queued ', when(run.queuedAt)),
        run.startedAt ? h('span', { title: fmtDate(run.startedAt) }, 'Started ', fmtDate(run.startedAt)) : null,
        run.finishedAt ? h('span', {}, 'Finished ', when(run.finishedAt)) : null),
      active ? h('div', { class: 'run-now' }, cancel) : pipeline ? h('a', { class: 'button secondary', href: `#/pipelines/${encodeURIComponent(pipeline.pipelineId)}` }, 'Back to pipeline') : null);
    render(stats,
      stat('Duration', active ? h('span', {}, fmtDuration(run.startedAt ? Date.now() - Date.parse(run.startedAt) : 0), h('span', { class: 'muted small' }, ' so far')) : fmtDuration(run.durationMs), 'duration'),
      stat('Rows read', count(t.read), 'read'),
      stat('Rows written', count(t.written), 'written'),
      stat('Rows rejected', count(t.rejected), 'rejected'));
    render(error,
      run.status === 'cancelled'
        ? notice('warn', h('strong', {}, 'Cancelled. '), 'Nothing was loaded: the destination is exactly as it was before this run.', run.error && run.error !== 'cancelled' ? ` (${run.error})` : '')
        : run.status === 'failed'
          ? notice('bad', h('strong', {}, 'Failed. '), run.error ?? 'The run failed.', ' Nothing was loaded: the destination is as it was before this run.')
          : null);
    render(steps, stepTable(run.steps));
    render(liveNote, active ? [h('span', { class: 'pulse', 'aria-hidden': 'true' }), ' Live: updating every second'] : `Finished ${run.status}.`);
  };

  const loadRejects = async () => {
    const r = await call('GET', `${runPath(run.runId, '/rejects')}?limit=${REJECTS_PAGE}&offset=${rejectsOffset}`);
    render(rejects, rejectsView(r.body.rejects, run, rejectsOffset, (next) => {
      rejectsOffset = next;
      void loadRejects().catch((err) => render(rejects, notice('bad', errorText(err))));
    }));
  };
  const loadLogs = async () => {
    const r = await call('GET', runPath(run.runId, '/logs'));
    render(logs, logView(r.body.logs));
  };
  const loadDetails = () =>
    Promise.all([
      loadRejects().catch((err) => render(rejects, notice('bad', h('strong', {}, 'Could not load rejected rows. '), errorText(err)))),
      loadLogs().catch((err) => render(logs, notice('bad', h('strong', {}, 'Could not load the log. '), errorText(err)))),
    ]);

  paint();
  void loadDetails();
  pollWhileShown(steps, POLL_MS, async () => {
    if (!ACTIVE_RUN.includes(run.status)) return false;
    run = (await call('GET', runPath(run.runId))).body.run;
    paint();
    if (run.status !== lastStatus) {
      announce(`Run ${run.runId} ${run.status}`);
      lastStatus = run.status;
    }
    await loadDetails();
    return ACTIVE_RUN.includes(run.status);
  });

  return h('div', {},
    head,
    actionStatus,
    stats,
    error,
    h('div', { class: 'section-head' }, h('h2', {}, 'Steps'), liveNote),
    steps,
    h('h2', {}, 'Rejected rows'),
    rejects,
    h('h2', {}, 'Log'),
    logs);
}

function stat(label, value, key) {
  return h('div', { class: 'stat', dataset: { stat: key } }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, value));
}

function stepTable(steps) {
  if (!steps.length) return emptyState('No steps recorded', 'The run has not reported its steps yet.');
  const max = Math.max(1, ...steps.map((s) => s.rowsIn));
  return dataTable({
    caption: 'Steps of the run with counts and timings',
    id: 'run-step-table',
    columns: [{ label: '#' }, { label: 'Step' }, { label: 'Status' }, { label: 'Rows in', class: 'num' }, { label: 'Rows out', class: 'num' }, { label: 'Rejected', class: 'num' }, { label: 'Duration', class: 'num' }, { label: 'Message' }],
    rows: steps.map((s, i) => ({
      attrs: { dataset: { step: s.stepId, status: s.status } },
      cells: [
        String(i + 1),
        h('div', { class: 'name-cell' }, h('span', { class: 'strong' }, s.name), h('span', { class: 'tag' }, s.type),
          meter(s.rowsOut / max)),
        statusBadge(s.status),
        count(s.rowsIn),
        count(s.rowsOut),
        s.rowsRejected ? h('span', { class: 'bad-text' }, count(s.rowsRejected)) : '0',
        fmtDuration(s.durationMs),
        s.message ? h('span', { class: 'message' }, s.message) : h('span', { class: 'muted' }, '—'),
      ],
    })),
  });
}

/** A thin bar of a step's rows out against the most rows any step took in (decoration only). */
function meter(share) {
  const fill = h('span', { class: 'meter-fill' });
  // CSSOM, not a style attribute: the page's CSP allows no inline styles.
  fill.style.width = `${Math.round(Math.min(1, Math.max(0, share)) * 100)}%`;
  return h('span', { class: 'meter', 'aria-hidden': 'true' }, fill);
}

function rejectsView(rows, run, offset, go) {
  const total = run.rowsRejected || totals(run).rejected;
  if (!rows.length && offset === 0) return emptyState('No rejected rows', ACTIVE_RUN.includes(run.status) ? 'None so far.' : 'Every row passed its checks.');
  const kept = Math.min(total, 1000);
  const pager = h('nav', { class: 'pager', 'aria-label': 'Rejected rows pages' },
    h('button', { type: 'button', class: 'secondary', disabled: offset === 0, onclick: () => go(Math.max(0, offset - REJECTS_PAGE)) }, 'Previous'),
    h('span', { id: 'rejects-info' }, `Rows ${offset + 1}–${offset + rows.length} of ${count(kept)}${total > 1000 ? ` kept (${count(total)} rejected; the first 1,000 are kept)` : ''}`),
    h('button', { type: 'button', class: 'secondary', disabled: rows.length < REJECTS_PAGE || offset + rows.length >= kept, onclick: () => go(offset + REJECTS_PAGE) }, 'Next'));
  const stepName = (id) => run.steps.find((s) => s.stepId === id)?.name ?? id;
  return h('div', {},
    dataTable({
      caption: 'Rejected rows with their reasons',
      id: 'reject-table',
      columns: [{ label: '#' }, { label: 'Step' }, { label: 'Reasons' }, { label: 'Row' }],
      rows: rows.map((r, i) => ({
        cells: [
          String(offset + i + 1),
          stepName(r.step),
          h('ul', { class: 'reasons' }, r.reasons.map((x) => h('li', {}, x))),
          h('code', { class: 'row-json' }, JSON.stringify(r.row)),
        ],
      })),
    }),
    pager);
}

function logView(lines) {
  if (!lines.length) return emptyState('No log lines', 'The run has not logged anything yet.');
  return h('ol', { class: 'log', 'aria-label': 'Run log' },
    lines.map((l) => h('li', { dataset: { level: l.level } },
      h('time', { datetime: l.at, class: 'mono muted' }, fmtDate(l.at).replace(' UTC', '')),
      h('span', { class: `level ${l.level}` }, l.level),
      h('span', { class: 'msg' }, l.message))));
}
