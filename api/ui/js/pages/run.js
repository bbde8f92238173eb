import { call, getSession, userPath } from '../api.js';
import { announce, confirmDialog, debounce, field, fmtDate, h, notice, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, errorText, loadInto } from '../components/async-view.js';
import { count, fmtDuration, when } from '../components/ops-format.js';
import { pollWhileShown } from '../components/poll.js';
import { ACTIVE_RUN, statusBadge } from '../components/status-badge.js';

/** @typedef {import('../types.js').ApiPipelineRun} PipelineRun */
/** @typedef {import('../types.js').ApiRunStepProgress} RunStep */
/** @typedef {import('../types.js').Answer<import('../types.js').ApiPipelineRunAnswer>} RunAnswer */

const REJECTS_PAGE = 10;
const POLL_MS = 1000;
/**
 * @param {string} runId
 * @param {string} [tail]
 */
const runPath = (runId, tail = '') => userPath(`/v1/sdk/pipeline-runs/${encodeURIComponent(runId)}${tail}/`);

/**
 * A run: totals, the step table with counts and timings (updated every second while the run is
 * queued or running), its rejected rows (paged), its log, and Cancel while it is active.
 * @param {string} runId
 */
export function runPage(runId) {
  const box = h('div', { id: 'run' });
  loadInto(box, async () => {
    /** @type {RunAnswer} */
    const r = await call('GET', runPath(runId));
    /** @type {import('../types.js').Answer<import('../types.js').ApiPipelineRead>} */
    const p = await call('GET', userPath(`/v1/sdk/pipelines/${encodeURIComponent(r.body.run.pipelineId)}/`), { expect: [200, 404] });
    return { run: r.body.run, pipeline: p.status === 200 ? p.body.data : null };
  }, (data) => live(data), { what: 'the run' });
  return h('section', { 'aria-labelledby': 'run-h' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb', id: 'run-crumbs' }, h('a', { href: '#/pipelines' }, 'Pipelines'), ' / ', h('span', { class: 'mono' }, runId)),
    h('h1', { id: 'run-h' }, `Run ${runId}`),
    box);
}

/**
 * Totals while running come from the steps (the run's own totals are written when it ends).
 * @param {PipelineRun} run
 */
function totals(run) {
  if (!ACTIVE_RUN.includes(run.status)) return { read: run.rowsRead, written: run.rowsWritten, rejected: run.rowsRejected };
  const source = run.steps.find((s) => s.type === 'source');
  const load = [...run.steps].reverse().find((s) => s.type === 'load');
  return { read: source?.rowsOut ?? 0, written: load?.rowsOut ?? 0, rejected: run.steps.reduce((n, s) => n + s.rowsRejected, 0) };
}

/** @param {{run: PipelineRun, pipeline: import('../types.js').ApiPipelineView | null}} data */
function live({ run: first, pipeline }) {
  let run = first;
  const crumbs = document.getElementById('run-crumbs');
  if (crumbs && pipeline) render(crumbs, h('a', { href: '#/pipelines' }, 'Pipelines'), ' / ', h('a', { href: `#/pipelines/${encodeURIComponent(pipeline.pipelineId)}` }, pipeline.name), ' / ', h('span', { class: 'mono' }, run.runId));
  // Every live region is updated in place: the controls (Cancel, the pager, the filters) are built
  // once and never taken off the page, so keyboard focus stays where it is across refreshes.
  const facts = h('div', { class: 'facts-inline' });
  const actions = h('div', { class: 'run-now', id: 'run-actions' });
  const head = h('div', { class: 'summary-bar', id: 'run-head' }, facts, actions);
  const stats = h('div', { class: 'stats', id: 'run-stats' });
  const steps = h('div', { id: 'run-steps' });
  const error = h('div', { id: 'run-error' });
  const actionStatus = h('div', { 'aria-live': 'polite', id: 'run-action-status' });
  const liveNote = h('p', { class: 'live-note', id: 'live-note', 'aria-live': 'off' });
  let lastStatus = run.status;
  /** @type {string | null} */
  let shownActions = null;

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
      /** @type {RunAnswer} */
      const answer = await call('POST', runPath(run.runId, '/cancel'), { expect: [202] });
      run = answer.body.run;
      render(actionStatus, notice('ok', `Cancel requested for ${run.runId}.`));
      paint();
    } catch (err) {
      render(actionStatus, notice('bad', h('strong', {}, 'Could not cancel. '), errorText(err)));
      cancel.disabled = false;
    }
  });
  // A failed (or cancelled) run: start the pipeline again, a new run, and follow it.
  const retry = h('button', { type: 'button', id: 'retry-run' }, 'Retry: run again');
  retry.addEventListener('click', async () => {
    retry.disabled = true;
    try {
      /** @type {RunAnswer} */
      const r = await call('POST', userPath(`/v1/sdk/pipelines/${encodeURIComponent(run.pipelineId)}/runs/`), { expect: [202, 409] });
      if (r.status === 409) {
        const refusal = /** @type {import('../types.js').ErrorAnswer | null} */ (r.body);
        render(actionStatus, notice('warn', h('strong', {}, 'Not started. '), refusal?.message ?? 'This pipeline already has an active run.'));
        retry.disabled = false;
        return;
      }
      announce(`Run ${r.body.run.runId} started`);
      location.hash = `#/runs/${encodeURIComponent(r.body.run.runId)}`;
    } catch (err) {
      render(actionStatus, notice('bad', h('strong', {}, 'Could not start a run. '), errorText(err)));
      retry.disabled = false;
    }
  });
  const back = pipeline ? h('a', { class: 'button secondary', href: `#/pipelines/${encodeURIComponent(pipeline.pipelineId)}` }, 'Back to pipeline') : null;

  const paint = () => {
    const active = ACTIVE_RUN.includes(run.status);
    const t = totals(run);
    render(facts,
      statusBadge(run.status),
      h('span', {}, 'Trigger ', h('strong', {}, run.trigger)),
      h('span', {}, 'Queued ', when(run.queuedAt)),
      run.startedAt ? h('span', { title: fmtDate(run.startedAt) }, 'Started ', fmtDate(run.startedAt)) : null,
      run.finishedAt ? h('span', {}, 'Finished ', when(run.finishedAt)) : null);
    // The buttons change only with the run's state (never re-drawn while it stays the same).
    const kind = active ? 'active' : run.status === 'failed' || run.status === 'cancelled' ? 'retry' : 'done';
    if (kind !== shownActions) {
      shownActions = kind;
      render(actions, kind === 'active' ? cancel : kind === 'retry' ? [retry, back] : back);
    }
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

  const rejects = rejectsPanel(() => run);
  const logs = logsPanel(() => run);
  const loadDetails = () => Promise.all([rejects.load(), logs.load()]);

  paint();
  void loadDetails();
  pollWhileShown(steps, POLL_MS, async () => {
    if (!ACTIVE_RUN.includes(run.status)) return false;
    /** @type {RunAnswer} */
    const answer = await call('GET', runPath(run.runId));
    run = answer.body.run;
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
    h('h2', { id: 'rejects-h' }, 'Rejected rows'),
    rejects.node,
    h('h2', { id: 'logs-h' }, 'Log'),
    logs.node);
}

/** The step choices of a filter: every step of the run (`value` picks the stored field: its ID for rejects, its name for logs). */
/**
 * @param {string} id
 * @param {string} label
 * @param {PipelineRun} run
 * @param {(step: RunStep) => string} value
 */
function stepSelect(id, label, run, value) {
  const select = h('select', { id, name: id }, h('option', { value: '' }, 'All steps'), run.steps.map((s) => h('option', { value: value(s) }, s.name)));
  return { node: field(label, select), select };
}

/** A download link of a run's rows (`what` rejects|logs) with the current filters; the CSRF token rides in the query (a link sends no header). */
/**
 * @param {string} runId
 * @param {'rejects' | 'logs'} what
 * @param {'csv' | 'ndjson'} format
 * @param {Record<string, string>} filters
 */
function exportHref(runId, what, format, filters) {
  const s = getSession();
  const q = new URLSearchParams({ format, ctn: s?.csrfToken ?? '', ...Object.fromEntries(Object.entries(filters).filter(([, v]) => v)) });
  return `${userPath(`/v1/sdk/pipeline-runs/${encodeURIComponent(runId)}/export/${what}/`)}?${q}`;
}

/**
 * @param {string} what
 * @param {string} label
 */
function downloads(what, label) {
  const csv = h('a', { class: 'button secondary', id: `${what}-csv`, download: '' }, 'Download CSV');
  const ndjson = h('a', { class: 'button secondary', id: `${what}-ndjson`, download: '' }, 'Download NDJSON');
  return { csv, ndjson, node: h('div', { class: 'actions downloads', role: 'group', 'aria-label': `Download ${label}` }, csv, ndjson) };
}

/** Rejected rows: filters (step, reason), downloads of every kept row, a table and a pager; the controls stay put across refreshes. */
/** @param {() => PipelineRun} currentRun */
function rejectsPanel(currentRun) {
  let offset = 0;
  const run = currentRun();
  const step = stepSelect('rejects-step', 'Step', run, (s) => s.stepId);
  const reason = h('input', { type: 'search', id: 'rejects-reason', name: 'reason', autocomplete: 'off', placeholder: 'Text in a reason' });
  const dl = downloads('rejects', 'rejected rows');
  const table = h('div', { id: 'rejects-table' });
  const prev = h('button', { type: 'button', class: 'secondary', id: 'rejects-prev' }, 'Previous');
  const next = h('button', { type: 'button', class: 'secondary', id: 'rejects-next' }, 'Next');
  const info = h('span', { id: 'rejects-info' });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Rejected rows pages' }, prev, info, next);
  const filters = () => ({ step: step.select.value, reason: reason.value.trim() });
  const load = async () => {
    try {
      const r = currentRun();
      const f = filters();
      const q = new URLSearchParams({ limit: String(REJECTS_PAGE), offset: String(offset), ...Object.fromEntries(Object.entries(f).filter(([, v]) => v)) });
      /** @type {import('../types.js').Answer<import('../types.js').ApiRunRejectList>} */
      const answer = await call('GET', `${runPath(r.runId, '/rejects')}?${q}`);
      const rows = answer.body.rejects;
      dl.csv.href = exportHref(r.runId, 'rejects', 'csv', f);
      dl.ndjson.href = exportHref(r.runId, 'rejects', 'ndjson', f);
      const filtered = Boolean(f.step || f.reason);
      const total = r.rowsRejected || totals(r).rejected;
      const kept = Math.min(total, 1000);
      render(table, rejectsTable(rows, r, offset, filtered));
      pager.hidden = !rows.length && offset === 0;
      prev.disabled = offset === 0;
      next.disabled = rows.length < REJECTS_PAGE || (!filtered && offset + rows.length >= kept);
      info.textContent = rows.length
        ? `Rows ${offset + 1}–${offset + rows.length}${filtered ? ' matching' : ` of ${count(kept)}${total > 1000 ? ` kept (${count(total)} rejected; the first 1,000 are kept)` : ''}`}`
        : 'No rows on this page';
    } catch (err) {
      render(table, notice('bad', h('strong', {}, 'Could not load rejected rows. '), errorText(err)));
    }
  };
  prev.addEventListener('click', () => { offset = Math.max(0, offset - REJECTS_PAGE); void load(); });
  next.addEventListener('click', () => { offset += REJECTS_PAGE; void load(); });
  const refilter = debounce(() => { offset = 0; void load(); }, 250);
  step.select.addEventListener('change', refilter);
  reason.addEventListener('input', refilter);
  const node = h('div', { id: 'rejects' },
    h('form', { class: 'panel row filters', role: 'search', 'aria-label': 'Filter rejected rows', onsubmit: (e) => e.preventDefault() },
      step.node, h('div', { class: 'grow' }, field('Reason contains', reason)), dl.node),
    table, pager);
  return { node, load };
}

/** The log: filters (level, step), downloads, the lines; the controls stay put across refreshes. */
/** @param {() => PipelineRun} currentRun */
function logsPanel(currentRun) {
  const run = currentRun();
  const level = h('select', { id: 'logs-level', name: 'level' }, h('option', { value: '' }, 'All levels'), ['info', 'warn', 'error'].map((l) => h('option', { value: l }, l)));
  const step = stepSelect('logs-step', 'Step', run, (s) => s.name);
  const dl = downloads('logs', 'the log');
  const list = h('div', { id: 'logs-list' });
  const filters = () => ({ level: level.value, step: step.select.value });
  const load = async () => {
    try {
      const r = currentRun();
      const f = filters();
      const q = new URLSearchParams(Object.fromEntries(Object.entries(f).filter(([, v]) => v)));
      /** @type {import('../types.js').Answer<import('../types.js').ApiRunLogList>} */
      const answer = await call('GET', `${runPath(r.runId, '/logs')}${q.size ? `?${q}` : ''}`);
      const lines = answer.body.logs;
      dl.csv.href = exportHref(r.runId, 'logs', 'csv', f);
      dl.ndjson.href = exportHref(r.runId, 'logs', 'ndjson', f);
      render(list, logView(lines, Boolean(f.level || f.step)));
    } catch (err) {
      render(list, notice('bad', h('strong', {}, 'Could not load the log. '), errorText(err)));
    }
  };
  level.addEventListener('change', () => void load());
  step.select.addEventListener('change', () => void load());
  const node = h('div', { id: 'logs' },
    h('form', { class: 'panel row filters', role: 'search', 'aria-label': 'Filter the log', onsubmit: (e) => e.preventDefault() }, field('Level', level), step.node, dl.node),
    list);
  return { node, load };
}

/**
 * @param {string} label
 * @param {import('../types.js').Child} value
 * @param {string} key
 */
function stat(label, value, key) {
  return h('div', { class: 'stat', dataset: { stat: key } }, h('div', { class: 'stat-label' }, label), h('div', { class: 'stat-value' }, value));
}

/** @param {RunStep[]} steps */
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
/** @param {number} share */
function meter(share) {
  const fill = h('span', { class: 'meter-fill' });
  // CSSOM, not a style attribute: the page's CSP allows no inline styles.
  fill.style.width = `${Math.round(Math.min(1, Math.max(0, share)) * 100)}%`;
  return h('span', { class: 'meter', 'aria-hidden': 'true' }, fill);
}

/**
 * @param {import('../types.js').ApiRunRejectedRow[]} rows
 * @param {PipelineRun} run
 * @param {number} offset
 * @param {boolean} filtered
 */
function rejectsTable(rows, run, offset, filtered) {
  if (!rows.length && offset === 0) {
    return filtered ? emptyState('No rejected row matches', 'No kept row matches these filters.') : emptyState('No rejected rows', ACTIVE_RUN.includes(run.status) ? 'None so far.' : 'Every row passed its checks.');
  }
  /** @param {string} id */
  const stepName = (id) => run.steps.find((s) => s.stepId === id)?.name ?? id;
  return dataTable({
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
  });
}

/**
 * @param {import('../types.js').ApiRunLogLine[]} lines
 * @param {boolean} filtered
 */
function logView(lines, filtered) {
  if (!lines.length) return filtered ? emptyState('No log line matches', 'No line matches these filters.') : emptyState('No log lines', 'The run has not logged anything yet.');
  return h('ol', { class: 'log', 'aria-label': 'Run log' },
    lines.map((l) => h('li', { dataset: { level: l.level } },
      h('time', { datetime: l.at, class: 'mono muted' }, fmtDate(l.at).replace(' UTC', '')),
      h('span', { class: `level ${l.level}` }, l.level),
      h('span', { class: 'msg' }, l.message))));
}
