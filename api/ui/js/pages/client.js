import { ApiError, call, userPath } from '../api.js';
import { announce, badge, download, fmtDate, h, notice } from '../dom.js';
import { asyncView, errorText } from '../components/async-view.js';
import { chartIcon, chartTypeName } from '../components/chart-icon.js';
import { facts } from '../components/facts.js';
import { phaseRank, revisionText } from '../components/manifest-status.js';
import { lifecyclePanel } from '../components/lifecycle-actions.js';

/** @typedef {import('../types.js').ApiClientResources} Resources */
/** @typedef {import('../types.js').ApiClientDetail} ClientDetail */
/** @typedef {import('../types.js').ApiStatusItem} StatusItem */
/** @typedef {{canAct: boolean, flash: HTMLElement, reload: () => Promise<void>}} PageContext */

const enc = encodeURIComponent;

/**
 * A client (`#/clients/<id>`): its resources by name with links, the reconcile status of its
 * manifests, the actions Retry (re-reconcile a failed manifest now) and Export, and its lifecycle
 * (components/lifecycle-actions.js: suspend, resume, offboard, restore, purge).
 * @param {string} rawId
 * @param {URLSearchParams} _query
 * @param {import('../types.js').ApiSettingsSession} me
 */
export function clientDetailPage(rawId, _query, me) {
  const clientId = rawId.trim().toUpperCase();
  const canAct = Boolean(me?.settings);
  const flash = h('div', { id: 'client-flash' });
  const load = async () => {
    /** @type {Promise<import('../types.js').Answer<Resources | import('../types.js').ApiErrorBody>>} */
    const resources = call('GET', userPath(`/v1/bi/admin/clients/${enc(clientId)}/resources/`), { expect: [200, 404] });
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiClientRead | import('../types.js').ApiErrorBody>>} */
    const record = call('GET', userPath(`/v1/bi/admin/clients/${enc(clientId)}/`), { expect: [200, 404] });
    const [res, read] = await Promise.all([resources, record]);
    return {
      res: res.status === 200 ? /** @type {Resources} */ (res.body) : null,
      notFound: res.status === 404 ? /** @type {import('../types.js').ApiErrorBody | null} */ (res.body)?.error ?? null : null,
      client: read.status === 200 ? /** @type {import('../types.js').ApiClientRead} */ (read.body).client : null,
    };
  };
  /**
   * @param {{res: Resources | null, notFound: string | null, client: ClientDetail | null}} data
   * @param {() => Promise<void>} reload
   */
  const draw = ({ res, notFound, client }, reload) => {
    if (!res) {
      return h('div', { class: 'panel empty-state', id: 'client-missing' },
        h('h1', { id: 'client-h' }, `Client ${clientId}`),
        notice('bad', notFound ?? `Client ${clientId} not found`),
        h('p', {}, h('a', { href: '#/clients' }, 'Back to the client registry')));
    }
    return page(res, client, { canAct, flash, reload });
  };
  const view = asyncView({ load, draw, label: `client ${clientId}`, id: 'client-view' });
  return h('section', { 'aria-labelledby': 'client-h', class: 'tenants client-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/clients' }, 'Clients'), h('span', { 'aria-hidden': 'true' }, ' / '), h('span', { 'aria-current': 'page' }, clientId)),
    flash, view);
}

/**
 * @param {Resources} r
 * @param {ClientDetail | null} c
 * @param {PageContext} context
 */
function page(r, c, { canAct, flash, reload }) {
  const own = r.manifests.find((m) => m.kind === 'Client') ?? null;
  const failing = own && (own.phase === 'Failed' || own.phase === 'Invalid');
  const title = c?.clientName ?? r.clientId;
  const actions = h('div', { class: 'page-actions' });
  if (canAct) {
    if (failing) actions.append(h('button', { type: 'button', id: 'retry', onclick: (e) => retry(/** @type {HTMLButtonElement} */ (e.currentTarget), own, flash, reload) }, 'Retry now'));
    if (r.status === 'ACTIVE') actions.append(h('button', { type: 'button', id: 'export', class: 'secondary', onclick: (e) => exportClient(/** @type {HTMLButtonElement} */ (e.currentTarget), r.clientId, flash) }, 'Export'));
  }
  return h('div', { class: 'client-body' },
    h('header', { class: 'page-head' },
      h('div', { class: 'title-block' },
        h('h1', { id: 'client-h' }, title),
        h('div', { class: 'subtitle' }, h('span', { class: 'mono' }, r.clientId), r.status ? badge(r.status) : badge('muted'), own ? phaseBadge(own.phase) : null)),
      actions),
    failureNotice(c, own),
    canAct ? lifecyclePanel({ clientId: r.clientId, name: title, status: r.status, retainUntil: c?.retainUntil, generatedBy: own?.generatedBy, inputId: own?.inputId, resources: r }, { flash, reload }) : null,
    h('div', { class: 'cards' },
      overview(r, c),
      manifestsPanel(r.manifests)),
    h('div', { class: 'cards' },
      connectionCard(r.connection, { canAct }),
      modelCard(r.model)),
    vdmsPanel(r.vdms),
    dashboardsPanel(r.dashboards),
    pipelinesPanel(r.pipelines));
}

/** @param {string} phase */
function phaseBadge(phase) {
  return h('span', { class: `badge ${phase}`, title: 'Reconcile phase of the client manifest' }, phase);
}

/**
 * @param {ClientDetail | null} c
 * @param {StatusItem | null} own
 */
function failureNotice(c, own) {
  /** @type {(HTMLElement | null)[]} */
  const parts = [];
  if (c?.status === 'FAILED') parts.push(h('p', {}, h('strong', {}, `Onboarding failed at step “${c.failedStep ?? '?'}”: `), c.failureReason ?? ''));
  if (own && (own.phase === 'Failed' || own.phase === 'Invalid')) {
    parts.push(h('p', {}, h('strong', {}, `${own.kind}/${own.name} is ${own.phase}${own.reason ? ` (${own.reason})` : ''}: `), own.message),
      own.nextRetryAt ? h('p', { class: 'small' }, `Next automatic retry ${fmtDate(own.nextRetryAt)} (attempt ${own.attempts}). Retry now applies the manifest at once.`) : null);
  }
  return parts.length ? h('div', { class: 'notice bad', role: 'alert', id: 'client-failure' }, parts) : null;
}

/**
 * @param {Resources} r
 * @param {ClientDetail | null} c
 */
function overview(r, c) {
  return h('section', { class: 'panel card', 'aria-labelledby': 'ov-h', id: 'client-overview' },
    h('h2', { id: 'ov-h' }, 'Overview'),
    facts(rowsOfOverview(r, c), { id: 'client-facts' }));
}

/**
 * @param {Resources} r
 * @param {ClientDetail | null} c
 * @returns {(import('../components/facts.js').Fact | null)[]}
 */
function rowsOfOverview(r, c) {
  return ([
      ['Client ID', r.clientId, 'mono'],
      ['Name', c?.clientName],
      c?.description ? ['Description', c.description] : null,
      ['Registry status', r.status ? badge(r.status) : 'not applied'],
      ['Onboarded by', c?.onboardedBy],
      ['Onboarded', fmtDate(c?.onboardedDate)],
      ['Last change', fmtDate(c?.lastModifiedDate)],
    ]);
}

/** @param {StatusItem[]} items */
function manifestsPanel(items) {
  const rows = [...items].sort((a, b) => phaseRank(a.phase) - phaseRank(b.phase) || a.key.localeCompare(b.key));
  return h('section', { class: 'panel card', 'aria-labelledby': 'mf-h', id: 'client-manifests' },
    h('h2', { id: 'mf-h' }, 'Manifests'),
    rows.length === 0
      ? h('p', { class: 'empty' }, 'No manifest defines this client (an API onboarding that failed leaves none).')
      : h('ul', { class: 'status-list' }, rows.map((m) => h('li', { dataset: { key: m.key, phase: m.phase } },
          h('div', { class: 'status-line' }, h('span', { class: 'mono key' }, m.key), badge(m.phase)),
          m.reason ? h('div', { class: 'small' }, h('span', { class: 'muted' }, 'Reason '), m.reason) : null,
          m.message && m.phase !== 'Synced' ? h('div', { class: 'small wrap' }, m.message) : null,
          h('div', { class: 'small muted' }, `Revision ${revisionText(m.lastAppliedRevision)} · ${m.path ?? 'no file'} · ${fmtDate(m.lastTransitionAt)}`)))),
    h('p', { class: 'small' }, h('a', { href: '#/manifests' }, 'All manifests')));
}

/**
 * @param {Resources['connection']} conn
 * @param {{canAct: boolean}} context
 */
function connectionCard(conn, { canAct }) {
  if (!conn) {
    return h('section', { class: 'panel card', 'aria-labelledby': 'cn-h', id: 'client-connection' },
      h('h2', { id: 'cn-h' }, 'Connection'), h('p', { class: 'empty' }, 'No connection recorded.'));
  }
  const result = h('div', { id: 'connection-test', 'aria-live': 'polite' }, testResult(conn.lastTest));
  const again = canAct
    ? h('button', { type: 'button', class: 'secondary', id: 'test-again', onclick: async (e) => {
        const button = /** @type {HTMLButtonElement} */ (e.currentTarget);
        button.disabled = true;
        result.replaceChildren(h('div', { class: 'loading small', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), 'Connecting…'));
        try {
          /** @type {import('../types.js').Answer<import('../types.js').ApiConnectionTested>} */
          const r = await call('POST', userPath(`/v1/bi/admin/connections/${enc(conn.connectionId)}/test/`), { body: {} });
          result.replaceChildren(testResult(r.body.connection.lastTest));
        } catch (err) {
          result.replaceChildren(notice('bad', `The test could not run: ${errorText(err)}`));
        } finally {
          button.disabled = false;
        }
      } }, conn.lastTest ? 'Test again' : 'Test connection')
    : null;
  return h('section', { class: 'panel card', 'aria-labelledby': 'cn-h', id: 'client-connection' },
    h('h2', { id: 'cn-h' }, 'Connection'),
    facts([
      ['Name', conn.name || '—'],
      ['Connection ID', conn.connectionId, 'mono'],
      ['Vendor', conn.vendor],
      ['Ownership', conn.shared ? 'shared platform warehouse' : 'this client’s own'],
      ['Defined by', conn.manifestKey ?? '—', 'mono'],
    ]),
    h('h3', { class: 'sub' }, 'Last test'),
    result,
    again && h('div', { class: 'actions' }, again));
}

/** @param {import('../types.js').ApiConnectionLastTest | null} t */
function testResult(t) {
  if (!t) return h('p', { class: 'empty' }, 'Not tested from the console yet.');
  return h('div', { class: `test-result ${t.ok ? 'ok' : 'bad'}`, dataset: { ok: String(t.ok) } },
    h('span', { class: `badge ${t.ok ? 'ok' : 'bad'}` }, t.ok ? 'connected' : 'failed'), ' ',
    h('span', { class: 'wrap' }, t.message),
    h('div', { class: 'small muted' }, `${fmtDate(t.at)} · ${t.durationMs} ms${t.by ? ` · by ${t.by}` : ''}`));
}

/** @param {Resources['model']} model */
function modelCard(model) {
  return h('section', { class: 'panel card', 'aria-labelledby': 'md-h', id: 'client-model' },
    h('h2', { id: 'md-h' }, 'Model'),
    model
      ? facts([
          ['Name', model.name],
          ['Model ID', model.modelId, 'mono'],
          ['Core model', model.coreModelId, 'mono'],
          ['Row-level security', model.securityEnabled ? h('span', { class: 'badge ok' }, 'on') : h('span', { class: 'badge muted' }, 'off')],
        ])
      : h('p', { class: 'empty' }, 'No client model (the onboarding did not get that far).'));
}

/**
 * @param {string[]} list
 * @param {string} [cls]
 */
function chips(list, cls = 'chip') {
  return h('ul', { class: 'chips' }, list.map((t) => h('li', { class: cls }, t)));
}

/** @param {Resources['vdms']} vdms */
function vdmsPanel(vdms) {
  return h('section', { class: 'panel', 'aria-labelledby': 'vd-h', id: 'client-vdms' },
    h('h2', { id: 'vd-h' }, `VDMs `, h('span', { class: 'count' }, String(vdms.length))),
    vdms.length === 0
      ? h('p', { class: 'empty' }, 'No VDMs.')
      : h('ul', { class: 'resource-list' }, vdms.map((v) => h('li', { dataset: { vdm: v.vdmId } },
          h('div', { class: 'status-line' }, h('h3', {}, v.name), h('span', { class: 'mono muted' }, v.vdmId), h('span', { class: `badge ${v.published ? 'ok' : 'muted'}` }, v.published ? 'published' : 'draft')),
          h('div', { class: 'small muted' }, `${v.columns.length} column${v.columns.length === 1 ? '' : 's'}`),
          chips(v.columns),
          v.calculations.length ? [h('div', { class: 'small muted' }, 'Calculations'), chips(v.calculations, 'chip calc')] : null))));
}

/** @param {Resources['dashboards']} dashboards */
function dashboardsPanel(dashboards) {
  return h('section', { class: 'panel', 'aria-labelledby': 'db-h', id: 'client-dashboards' },
    h('h2', { id: 'db-h' }, 'Dashboards ', h('span', { class: 'count' }, String(dashboards.length))),
    dashboards.length === 0
      ? h('p', { class: 'empty' }, 'No dashboards.')
      : h('ul', { class: 'resource-list' }, dashboards.map((d) => h('li', { dataset: { facade: d.facadeId } },
          h('div', { class: 'status-line' }, h('h3', {}, h('a', { href: `#/dashboards/${enc(d.facadeId)}` }, d.name)), h('span', { class: 'mono muted' }, d.facadeId)),
          d.description ? h('p', { class: 'small' }, d.description) : null,
          h('ul', { class: 'sections' }, d.sections.map((s) => h('li', {},
            h('a', { href: `#/dashboards/${enc(d.facadeId)}?section=${enc(s.name)}`, class: 'section-link' }, s.name),
            h('ul', { class: 'chips' }, s.charts.map((c) => h('li', { class: 'chip chart-chip', title: chartTypeName(c.type) }, chartIcon(c.type, { size: 16 }), c.title || c.chartId))))))))));
}

/** @param {Resources['pipelines']} pipelines */
function pipelinesPanel(pipelines) {
  return h('section', { class: 'panel', 'aria-labelledby': 'pl-h', id: 'client-pipelines' },
    h('h2', { id: 'pl-h' }, 'Pipelines ', h('span', { class: 'count' }, String(pipelines.length))),
    pipelines.length === 0
      ? h('p', { class: 'empty' }, 'No pipelines use this client’s connections.')
      : h('ul', { class: 'resource-list compact' }, pipelines.map((p) => h('li', { class: 'status-line', dataset: { pipeline: p.pipelineId } },
          h('a', { href: `#/pipelines/${enc(p.pipelineId)}` }, p.name),
          h('span', { class: 'mono muted' }, p.pipelineId),
          h('span', { class: 'badge muted' }, p.status)))));
}

/**
 * @param {HTMLButtonElement} button
 * @param {StatusItem} own
 * @param {HTMLElement} flash
 * @param {() => Promise<void>} reload
 */
async function retry(button, own, flash, reload) {
  button.disabled = true;
  flash.replaceChildren(notice('info', `Reconciling ${own.key}…`));
  try {
    /** @type {import('../types.js').Answer<import('../types.js').ApiRetryResult>} */
    const r = await call('POST', '/v1/reconciler/retry', { body: { key: own.key } });
    const ok = r.body.phase === 'Synced';
    const text = ok ? `${r.body.key} is Synced.` : `${r.body.key} is still ${r.body.phase}: ${r.body.message}`;
    flash.replaceChildren(notice(ok ? 'ok' : 'bad', text));
    announce(text);
    await reload();
  } catch (err) {
    flash.replaceChildren(notice('bad', `Retry failed: ${errorText(err)}`));
    button.disabled = false;
  }
}

/**
 * @param {HTMLButtonElement} button
 * @param {string} clientId
 * @param {HTMLElement} flash
 */
async function exportClient(button, clientId, flash) {
  button.disabled = true;
  try {
    /** @type {import('../types.js').Answer<{package?: unknown}>} */
    const r = await call('GET', userPath(`/v1/bi/admin/clients/${enc(clientId)}/export/`));
    download(`${clientId}.json`, r.body?.package ?? r.body);
    flash.replaceChildren(notice('ok', `Exported ${clientId}.json: the onboarding package that recreates this client.`));
  } catch (err) {
    flash.replaceChildren(notice('bad', err instanceof ApiError ? err.message : String(err)));
  } finally {
    button.disabled = false;
  }
}
