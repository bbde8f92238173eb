import { ApiError, call, userPath } from './api.js';
import { fmtDate, h } from './dom.js';
import { subscribe } from './events.js';

/** @typedef {import('./types.js').ErrorAnswer} ErrorAnswer */
/** @typedef {import('./progress.js').Progress} Progress */
/**
 * What an onboarding run ended with: the answer's status and body (an OnboardResult, an
 * OnboardFailed, a refusal's ErrorBody, or `{error}` when there was no usable answer).
 * @typedef {object} Outcome
 * @property {boolean} live the event stream was followed
 * @property {string} [connectionId] the connection written first
 * @property {string} [secretRef]
 * @property {number} status
 * @property {{client?: import('./types.js').ApiOnboardedClient, status?: string, error?: string} | null} body
 * @property {boolean} [refused] a 409: refused before any write
 * @property {string | null} [failedAt] the failing step
 * @property {string} [error] no usable answer
 */

/** The steps docs/contract/api.md §1 names, matched to the reconciler's step names. */
/**
 * @param {{withConnection: boolean, withDashboards: boolean}} options
 * @returns {import('./progress.js').StepSpec[]}
 */
export function clientSteps({ withConnection, withDashboards }) {
  return [
    withConnection && { id: 'connection-manifest', group: 'Connection', label: 'Write the connection manifest', match: /write manifest/i },
    withConnection && { id: 'connection', group: 'Connection', label: 'Create connection record', match: /connection/i },
    { id: 'manifest', group: 'Client', label: 'Write the client manifest', match: /write manifest/i },
    { id: 'link', group: 'Client', label: withConnection ? 'Link the connection to the client' : 'Link the connection (created when missing)', match: /connection/i },
    { id: 'model', group: 'Client', label: 'Create client model inheriting from the core model', match: /model/i },
    { id: 'vdm', group: 'Client', label: 'Create and publish VDM(s)', match: /vdm/i },
    { id: 'dashboard', group: 'Client', label: 'Deploy dashboard(s) with experiments and facades', match: /dashboard|facade|experiment/i, skip: !withDashboards },
    { id: 'register', group: 'Client', label: 'Register client as ACTIVE', match: /regist|client|registry/i },
  ].filter((s) => s !== false);
}

/** The reason of an error text without its leading `<step>: `, when the step is known (never guessed from the text). */
/**
 * @param {string | null | undefined} error
 * @param {string | null} step
 */
function reasonOf(error, step) {
  const text = error ?? 'unknown error';
  return step && text.startsWith(`${step}: `) ? text.slice(step.length + 2) : text;
}

/**
 * Runs an onboarding from the UI: (optionally) the Connection first, then the package through
 * the same onboarding endpoint the API offers. The page follows the reconciler's event stream:
 * each step is drawn when its event arrives, which is before the write's HTTP answer (the server
 * writes a step's event to the stream as the step starts, the answer after the last one). The
 * answer only fills in the result. Resolves with what happened; a network error or a 5xx
 * resolves too (`error`), with the running step failed, so the page never spins forever.
 * @param {{connection: Record<string, unknown> | null | undefined, pkg: Record<string, unknown>, progress: Progress}} run
 * @returns {Promise<Outcome>}
 */
export async function runOnboarding({ connection, pkg, progress }) {
  const clientId = String(pkg.clientId ?? '').trim().toUpperCase();
  /** @type {string | null} */
  let phaseFor = null; // which group's events we are listening to
  /** @type {string | null} */
  let failedStep = null; // the reason of the Client's Failed phase event: the failing step
  /** @type {(value?: unknown) => void} */
  let connectionSynced = () => {};
  const connectionEvent = new Promise((resolve) => (connectionSynced = resolve));
  const events = subscribe((e) => {
    if (!e || typeof e !== 'object') return;
    const group = e.kind === 'Connection' && phaseFor === 'Connection' ? 'Connection' : e.kind === 'Client' && String(e.name).toUpperCase() === clientId ? 'Client' : null;
    if (!group) return;
    if (e.type === 'step' && typeof e.step === 'string') progress.started(e.step, group);
    else if (e.type === 'phase' && e.phase === 'Synced') {
      progress.completeGroup(group);
      if (group === 'Connection') connectionSynced();
    }
    else if (e.type === 'phase' && e.phase === 'Failed' && group === 'Client') failedStep = typeof e.reason === 'string' ? e.reason : null;
  });
  /** @type {boolean} */
  const live = await Promise.race([events.ready, new Promise((r) => setTimeout(() => r(false), 3000))]);
  /** @type {Outcome} */
  const result = { live, connectionId: undefined, secretRef: undefined, status: 0, body: null };
  try {
    if (connection) {
      phaseFor = 'Connection';
      progress.set('connection', 'running');
      /** @type {import('./types.js').Answer<import('./types.js').ApiConnectionWritten & ErrorAnswer>} */
      const r = await call('POST', userPath('/v1/bi/admin/connections/'), { body: connection, expect: [200, 201, 400, 409, 422] });
      if (r.status >= 400) {
        progress.fail('Connection', 'connection', r.body?.error ?? `HTTP ${r.status}`);
        progress.fail('Client', null, 'not started');
        return { ...result, status: r.status, body: r.body, failedAt: 'connection' };
      }
      // Events and answer travel on two connections: give the stream's last event a moment.
      if (live) await Promise.race([connectionEvent, new Promise((resolve) => setTimeout(resolve, 1500))]);
      result.connectionId = r.body.connectionId;
      result.secretRef = r.body.secretRef;
      progress.completeGroup('Connection', r.body.connectionId);
      pkg = { ...pkg, connectionId: r.body.connectionId };
    }
    phaseFor = 'Client';
    /** @type {import('./types.js').Answer<Outcome['body']>} */
    const r = await call('POST', userPath('/v1/sdk/client/onboard/'), { body: pkg, expect: [200, 201, 400, 409, 422] });
    result.status = r.status;
    result.body = r.body;
    if (r.status === 201) progress.completeGroup('Client');
    else if (r.status === 200) progress.skipAll('Client', 'the client already exists: nothing was done');
    else if (r.status === 409) {
      // A refusal before any write (another client's connection, a held client): no step failed.
      progress.refuse('Client', r.body?.error ?? 'HTTP 409');
      result.refused = true;
    } else {
      const step = r.status === 422 ? failedStep ?? (await auditOf(clientId))?.failedStep ?? null : null;
      progress.fail('Client', step, reasonOf(r.body?.error, step));
      result.failedAt = step;
    }
    return result;
  } catch (err) {
    // No usable answer (network error, 5xx, a proxy's page): the running step failed, retry is possible.
    const message = err instanceof ApiError ? err.message : String(err);
    progress.abort(message);
    return { ...result, status: err instanceof ApiError ? err.status : 0, body: { error: message }, error: message };
  } finally {
    // Late events of this run may still be in flight: give them a moment, then close.
    setTimeout(() => events.close(), 1500);
  }
}

/**
 * The client's onboarding audit (failed step and reason as the store recorded them), or null.
 * @param {string} clientId
 * @returns {Promise<import('./types.js').ApiClientAudit['audit']>}
 */
async function auditOf(clientId) {
  try {
    /** @type {import('./types.js').Answer<import('./types.js').ApiClientAudit>} */
    const r = await call('GET', userPath(`/v1/bi/admin/clients/${encodeURIComponent(clientId)}/audit/`));
    return r.body.audit ?? null;
  } catch {
    return null;
  }
}

/** The result panel: new IDs, or the failing step, its reason and the FAILED audit entry. */
/**
 * @param {Outcome} outcome
 * @param {string} clientId
 */
export async function resultPanel(outcome, clientId) {
  const c = outcome.body?.client;
  if (outcome.status === 200) {
    return h('section', { class: 'panel', 'aria-labelledby': 'result-h', id: 'result', dataset: { outcome: 'ALREADY_EXISTS' } },
      h('h2', { id: 'result-h' }, 'Nothing was created'),
      h('div', { class: 'notice bad', role: 'alert' }, `${c?.clientId ?? clientId} already exists (${c?.status ?? 'ACTIVE'}): it was left unchanged and nothing was imported. Choose another client ID to create a copy.`),
      h('div', { class: 'actions' }, h('a', { class: 'button secondary', href: `#/clients/${encodeURIComponent(c?.clientId ?? clientId)}` }, `Open ${c?.clientId ?? clientId}`)));
  }
  if (outcome.status === 201) {
    /** @type {[string, string | null | undefined][]} */
    const ids = [
      ['Client ID', c?.clientId],
      ['Status', c?.status],
      ['Connection', c?.connectionId ?? outcome.connectionId],
      ['Client model', c?.modelId],
      ['Core model', c?.coreModelId],
      ['VDMs', (c?.vdmIds ?? []).join(', ') || '—'],
      ['Facades', (c?.facadeIds ?? []).join(', ') || '—'],
      ['Experiments', (c?.experimentIds ?? []).join(', ') || '—'],
      ['Onboarded by', c?.onboardedBy],
      ['Onboarded', fmtDate(c?.onboardedDate)],
    ];
    return h(
      'section',
      { class: 'panel', 'aria-labelledby': 'result-h', id: 'result', dataset: { outcome: outcome.body?.status ?? 'COMPLETED' } },
      h('h2', { id: 'result-h' }, 'Client created'),
      h('div', { class: 'notice ok', role: 'status' }, `${c?.clientId} is ACTIVE.`),
      h('dl', { class: 'facts' }, ids.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { class: 'mono' }, v ?? '—')])),
      h('div', { class: 'actions' }, h('a', { class: 'button', href: `#/clients/${encodeURIComponent(c?.clientId ?? clientId)}` }, 'Open client'), h('a', { class: 'button secondary', href: '#/clients' }, 'Back to clients')),
    );
  }
  if (outcome.refused) {
    const kept = outcome.connectionId ? ` The connection ${outcome.connectionId} written for it is kept; trying again reuses it.` : '';
    return h('section', { class: 'panel', 'aria-labelledby': 'result-h', id: 'result', dataset: { outcome: 'REFUSED' } },
      h('h2', { id: 'result-h' }, 'Refused: nothing was written'),
      h('div', { class: 'notice bad', role: 'alert' }, h('strong', {}, 'The server refused the client before writing any of it: '), outcome.body?.error ?? 'HTTP 409', '.', kept),
      h('p', {}, 'No step ran, so there is nothing to roll back. Change what the reason names and try again.'));
  }
  const audit = outcome.status === 422 && clientId ? await auditOf(clientId) : null;
  const step = outcome.failedAt ?? audit?.failedStep ?? null;
  const reason = audit?.failureReason ?? reasonOf(outcome.body?.error, step);
  const panel = h(
    'section',
    { class: 'panel', 'aria-labelledby': 'result-h', id: 'result', dataset: { outcome: 'FAILED' } },
    h('h2', { id: 'result-h' }, 'Onboarding failed'),
    h('div', { class: 'notice bad', role: 'alert' },
      outcome.status === 422 ? [h('strong', {}, `Step ${step ?? '?'} failed: `), reason] : outcome.body?.error ?? `The server answered ${outcome.status}.`),
  );
  if (audit) {
    panel.append(
      h('h3', {}, 'Audit entry'),
      h('dl', { class: 'facts', id: 'failed-audit' },
        h('dt', {}, 'Status'), h('dd', {}, audit.status),
        h('dt', {}, 'Failed step'), h('dd', {}, audit.failedStep ?? step ?? '—'),
        h('dt', {}, 'Reason'), h('dd', {}, reason),
        h('dt', {}, 'By'), h('dd', {}, audit.onboardedBy ?? '—'),
        h('dt', {}, 'When'), h('dd', {}, fmtDate(audit.lastModifiedDate ?? audit.onboardedDate))),
    );
  }
  return panel;
}
