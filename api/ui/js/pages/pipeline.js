import { ApiError, call, userPath } from '../api.js';
import { announce, field, fmtDate, h, notice, render, showProblems } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, errorText, loadInto } from '../components/async-view.js';
import { count, fmtDuration, scheduleText, stepSettings, when } from '../components/ops-format.js';
import { pollWhileShown } from '../components/poll.js';
import { ACTIVE_RUN, statusBadge } from '../components/status-badge.js';
import { ownerCell } from './pipelines.js';
import { objectHref } from './object.js';

/** @typedef {import('../types.js').ApiPipelineView} PipelineView */
/** @typedef {import('../types.js').ApiPipelineRun} PipelineRun */
/** @typedef {import('../types.js').Answer<import('../types.js').ApiPipelineRunList>} RunListAnswer */

/** @param {string} id */
const runsPath = (id) => userPath(`/v1/sdk/pipelines/${encodeURIComponent(id)}/runs/`);

/** A pipeline: what it does (steps, source, destination, schedule), Run now, and its run history. */
/** @param {string} pipelineId */
export function pipelinePage(pipelineId) {
  const box = h('div', { id: 'pipeline' });
  /** @type {() => Promise<void>} */
  const reload = loadInto(box, async () => {
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiPipelineRead>>} */
    const read = call('GET', userPath(`/v1/sdk/pipelines/${encodeURIComponent(pipelineId)}/`));
    /** @type {Promise<RunListAnswer>} */
    const history = call('GET', `${runsPath(pipelineId)}?limit=20`);
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiReconcileStatus>>} */
    const statuses = call('GET', '/v1/reconciler/status?kind=Pipeline');
    const [p, runs, status] = await Promise.all([read, history, statuses]);
    const key = status.body.items.find((i) => i.resourceIds?.pipelineId === pipelineId)?.key ?? null;
    return { pipeline: p.body.data, runs: runs.body.runs, key };
  }, (data) => view(data, () => reload()), { what: 'the pipeline' });
  return h('section', { 'aria-labelledby': 'pipeline-h' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/pipelines' }, 'Pipelines'), ' / ', h('span', { class: 'mono' }, pipelineId)),
    h('h1', { id: 'pipeline-h' }, `Pipeline ${pipelineId}`),
    box);
}

/**
 * @param {{pipeline: PipelineView, runs: PipelineRun[], key: string | null}} data
 * @param {() => Promise<void>} reload
 */
function view({ pipeline: p, runs: initialRuns, key }, reload) {
  const heading = document.getElementById('pipeline-h');
  if (heading) heading.textContent = p.name;
  let runs = initialRuns;
  const status = h('div', { id: 'run-now-status', 'aria-live': 'polite' });
  const reason = h('p', { class: 'hint', id: 'run-now-reason' });
  const runNow = h('button', { type: 'button', id: 'run-now', 'aria-describedby': 'run-now-reason' }, 'Run now');
  const runsBox = h('div', { id: 'runs' });

  const active = () => runs.find((r) => ACTIVE_RUN.includes(r.status));
  const paint = () => {
    const a = active();
    runNow.disabled = Boolean(a);
    render(reason, a ? ['A run is already ', a.status, ' (', h('a', { href: `#/runs/${a.runId}` }, a.runId), '): one run at a time per pipeline.'] : 'Starts a run now; its steps and counts update live on the run page.');
    render(runsBox, runsTable(runs));
  };
  const refresh = async () => {
    /** @type {RunListAnswer} */
    const answer = await call('GET', `${runsPath(p.pipelineId)}?limit=20`);
    runs = answer.body.runs;
    paint();
  };
  runNow.addEventListener('click', async () => {
    runNow.disabled = true;
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiPipelineRunAnswer>} */
      const r = await call('POST', runsPath(p.pipelineId), { expect: [202, 409] });
      if (r.status === 409) {
        const refusal = /** @type {import('../types.js').ErrorAnswer | null} */ (r.body);
        render(status, notice('warn', h('strong', {}, 'Not started. '), refusal?.message ?? 'This pipeline already has an active run.'));
        announce('Run not started: a run is already active');
      } else {
        const run = r.body.run;
        render(status, notice('ok', `Run ${run.runId} started. `, h('a', { href: `#/runs/${run.runId}`, id: 'watch-run' }, 'Watch it live')));
        announce(`Run ${run.runId} started`);
      }
    } catch (err) {
      render(status, notice('bad', h('strong', {}, 'Could not start a run. '), errorText(err)));
    }
    await refresh().catch(() => {});
  });
  paint();
  // The history follows an active run until it ends.
  pollWhileShown(runsBox, 2000, async () => {
    if (active()) await refresh();
    return true;
  });

  /** @type {Partial<PipelineView['source']>} */
  const src = p.source ?? {};
  /** @type {Partial<PipelineView['destination']>} */
  const dst = p.destination ?? {};
  const sourceStep = p.steps.find((s) => s.type === 'source');
  const loadStep = p.steps.find((s) => s.type === 'load');
  /** @param {string | undefined} id */
  const conn = (id) => (id ? h('a', { href: '#/connections', class: 'mono' }, id) : '—');
  return h('div', {},
    h('div', { class: 'summary-bar' },
      h('div', { class: 'facts-inline' },
        statusBadge(p.status === 'draft' ? 'pending' : p.status, p.status),
        h('span', {}, 'Client ', ownerCell(p.owner)),
        h('span', { class: 'mono muted' }, p.pipelineId)),
      h('div', { class: 'run-now' }, runNow, reason)),
    status,
    p.description ? h('p', { class: 'lead' }, p.description) : null,
    h('div', { class: 'cards' },
      h('div', { class: 'panel card' },
        h('h2', {}, 'Source'),
        h('dl', { class: 'facts' },
          h('dt', {}, 'Type'), h('dd', {}, src.type ?? '—'),
          h('dt', {}, 'Connection'), h('dd', {}, conn(src.connectionId)),
          sourceStep?.config?.tableName ? [h('dt', {}, 'Table'), h('dd', { class: 'mono' }, [sourceStep.config.schemaName, sourceStep.config.tableName].filter(Boolean).join('.'))] : null)),
      h('div', { class: 'panel card' },
        h('h2', {}, 'Destination'),
        h('dl', { class: 'facts' },
          h('dt', {}, 'Connection'), h('dd', {}, conn(dst.connectionId)),
          h('dt', {}, 'Schema'), h('dd', { class: 'mono' }, dst.schemaName ?? '—'),
          loadStep?.config?.tableName ? [h('dt', {}, 'Table'), h('dd', { class: 'mono' }, String(loadStep.config.tableName)), h('dt', {}, 'Mode'), h('dd', {}, String(loadStep.config.mode ?? 'replace'))] : null)),
      h('div', { class: 'panel card' },
        h('h2', {}, 'Schedule'),
        h('dl', { class: 'facts' },
          h('dt', {}, 'When'), h('dd', {}, scheduleText(p.schedule)),
          h('dt', {}, 'Enabled'), h('dd', {}, p.schedule ? statusBadge(p.schedule.isEnabled ? 'enabled' : 'off', p.schedule.isEnabled ? 'Enabled' : 'Disabled') : 'No schedule'),
          h('dt', {}, 'Next run'), h('dd', {}, p.nextRunAt ? [when(p.nextRunAt), h('span', { class: 'muted small' }, ` (${fmtDate(p.nextRunAt)})`)] : '—')),
        scheduleEditor(p, reload))),
    key ? h('p', {}, h('a', { href: objectHref(key), id: 'pipeline-manifest' }, 'Manifest, diff and history')) : null,
    h('h2', {}, `Steps (${p.steps.length})`),
    dataTable({
      caption: 'Steps',
      id: 'step-definitions',
      columns: [{ label: '#' }, { label: 'Type' }, { label: 'Name' }, { label: 'Key settings' }],
      rows: p.steps.map((s, i) => ({
        cells: [String(i + 1), h('span', { class: 'tag' }, s.type), s.name, h('ul', { class: 'settings' }, stepSettings(s.config).map((x) => h('li', {}, x)))],
      })),
    }),
    h('h2', {}, 'Run history'),
    runsBox);
}

/** @param {PipelineRun[]} runs */
function runsTable(runs) {
  if (!runs.length) return emptyState('No runs yet', 'Use Run now to start the first run, or wait for the schedule.');
  return dataTable({
    caption: 'Runs, newest first',
    id: 'run-history',
    columns: [{ label: 'Run' }, { label: 'Status' }, { label: 'Trigger' }, { label: 'Started' }, { label: 'Duration' }, { label: 'Read' }, { label: 'Written' }, { label: 'Rejected' }],
    rows: runs.map((r) => ({
      attrs: { dataset: { run: r.runId } },
      cells: [
        h('a', { href: `#/runs/${encodeURIComponent(r.runId)}`, class: 'mono' }, r.runId),
        statusBadge(r.status),
        r.trigger,
        when(r.startedAt ?? r.queuedAt),
        fmtDuration(r.durationMs),
        count(r.rowsRead),
        count(r.rowsWritten),
        count(r.rowsRejected),
      ],
    })),
  });
}


const FREQUENCIES = ['hourly', 'daily', 'weekly', 'monthly', 'cron', 'once'];

/**
 * Change the schedule (checked by the server as an import is: too frequent a cron is refused at
 * its field), and pause or resume it: the pipeline's manifest is rewritten by the server's one
 * write path. A paused schedule fires nothing; Run now still works.
 * @param {PipelineView} p
 * @param {() => Promise<void>} reload
 */
function scheduleEditor(p, reload) {
  /** @type {Partial<import('../types.js').PipelineSchedule>} */
  const s = p.schedule ?? {};
  const status = h('div', { id: 'schedule-status', 'aria-live': 'polite' });
  const frequency = h('select', { name: 'frequency', id: 'schedule-frequency' }, FREQUENCIES.map((f) => h('option', { value: f, selected: f === (s.frequency ?? 'daily') }, f)));
  const cron = h('input', { type: 'text', name: 'cronExpression', id: 'schedule-cron', autocomplete: 'off', spellcheck: 'false', value: s.cronExpression ?? '', placeholder: '0 6 * * *' });
  const startTime = h('input', { type: 'text', name: 'startTime', id: 'schedule-time', autocomplete: 'off', value: s.startTime ?? '', placeholder: 'HH:MM' });
  /** @type {Record<string, HTMLInputElement | HTMLSelectElement>} */
  const controls = { 'schedule.frequency': frequency, 'schedule.cronExpression': cron, 'schedule.startTime': startTime };
  /**
   * @param {import('../types.js').ApiScheduleUpdate} body
   * @param {HTMLButtonElement} button
   * @param {string} done
   */
  const send = async (body, button, done) => {
    button.setAttribute('aria-disabled', 'true');
    try {
      await call('PATCH', userPath(`/v1/bi/admin/pipelines/${encodeURIComponent(p.pipelineId)}/schedule/`), { body });
      announce(done);
      await reload();
      document.getElementById(button.id)?.focus();
      const again = document.getElementById('schedule-status');
      if (again) render(again, notice('ok', done));
    } catch (err) {
      button.removeAttribute('aria-disabled');
      const problems = err instanceof ApiError && err.status === 400
        ? err.problems.map((x) => ({ control: controls[x.path] ?? null, message: x.text }))
        : [{ control: null, message: errorText(err) }];
      const summary = showProblems(Object.values(controls), problems);
      render(status, summary);
      summary?.focus();
    }
  };
  const save = h('button', { type: 'submit', id: 'save-schedule', class: 'secondary' }, 'Save schedule');
  const paused = !s.isEnabled;
  const toggle = h('button', { type: 'button', id: 'pause-schedule', class: paused ? '' : 'secondary' }, paused ? 'Resume schedule' : 'Pause schedule');
  toggle.addEventListener('click', () => {
    if (toggle.getAttribute('aria-disabled') === 'true') return;
    if (paused && !s.frequency) {
      render(status, notice('warn', 'Choose a frequency and save the schedule first.'));
      return;
    }
    void send({ isEnabled: paused }, toggle, paused ? 'Schedule resumed.' : 'Schedule paused: it fires nothing until resumed. Run now still works.');
  });
  const form = h('form', { class: 'schedule-form', id: 'schedule-form', 'aria-label': 'Edit the schedule', onsubmit: (e) => {
    e.preventDefault();
    if (save.getAttribute('aria-disabled') === 'true') return;
    /** @type {import('../types.js').ApiScheduleUpdate} */
    const body = { frequency: /** @type {import('../types.js').ApiScheduleUpdate['frequency']} */ (frequency.value), cronExpression: frequency.value === 'cron' ? cron.value.trim() || null : null, startTime: startTime.value.trim() || null };
    if (!s.frequency) body.isEnabled = true;
    void send(body, save, 'Schedule saved.');
  } },
    field('Frequency', frequency),
    field('Cron expression', cron, 'Five fields (minute hour day month weekday); used when the frequency is cron.'),
    field('Start time (UTC)', startTime),
    save);
  return h('div', { class: 'schedule-edit' }, h('h3', {}, 'Change'), form, h('div', { class: 'actions' }, toggle), status);
}
