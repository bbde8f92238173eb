import { ApiError, call, userPath } from '../api.js';
import { badge, download, fmtDate, h, notice } from '../dom.js';

const list = (v) => (Array.isArray(v) ? (v.length ? v.join(', ') : '—') : (v ?? '—'));

/** A client's detail: registry fields, onboarding audit, the manifest's reconcile status, Export. */
export async function clientDetailPage(clientId) {
  const id = encodeURIComponent(clientId);
  const [read, audit] = await Promise.all([
    call('GET', userPath(`/v1/bi/admin/clients/${id}/`), { expect: [200, 404] }).catch((e) => ({ status: e.status ?? 0, body: e.body })),
    call('GET', userPath(`/v1/bi/admin/clients/${id}/audit/`), { expect: [200, 404] }).catch(() => ({ status: 0, body: null })),
  ]);
  const header = h('div', { class: 'row' }, h('h1', { class: 'grow', id: 'client-h' }, `Client ${clientId.toUpperCase()}`), h('a', { class: 'button secondary', href: '#/clients' }, 'Back to clients'));
  if (read.status !== 200 && !(audit.status === 200 && audit.body?.audit)) {
    return h('section', { 'aria-labelledby': 'client-h' }, header, notice('bad', read.body?.error ?? `Client ${clientId} not found`), auditPanel(audit.body));
  }
  const c = read.status === 200 ? read.body.client : null;
  const status = h('div');
  const exportBtn = h('button', { type: 'button', id: 'export' }, 'Export');
  exportBtn.addEventListener('click', async () => {
    exportBtn.disabled = true;
    try {
      const r = await call('GET', userPath(`/v1/bi/admin/clients/${id}/export/`));
      const pkg = r.body?.package ?? r.body;
      download(`${clientId.toUpperCase()}.json`, pkg);
      status.replaceChildren(notice('ok', `Exported ${clientId.toUpperCase()}.json`));
    } catch (err) {
      status.replaceChildren(notice('bad', err instanceof ApiError ? err.message : String(err)));
    } finally {
      exportBtn.disabled = false;
    }
  });
  const facts = c
    ? [
        ['Client ID', c.clientId], ['Name', c.clientName], ['Description', c.description || '—'], ['Status', badge(c.status)],
        ['Connection (dbId)', c.dbId], ['Client model', c.modelId], ['Core model', c.coreModelId], ['VDM', c.vdmId],
        ['Facade', c.facadeId ?? '—'], ['Experiments', list(c.experimentIds)], ['Active', String(c.isActive)], ['Deleted', String(c.isDeleted)],
        ['Onboarded by', c.onboardedBy], ['Onboarded', fmtDate(c.onboardedDate)], ['Last modified', fmtDate(c.lastModifiedDate)],
      ]
    : [];
  return h('section', { 'aria-labelledby': 'client-h' },
    header,
    c && h('div', { class: 'panel' },
      h('h2', {}, 'Registry record'),
      h('dl', { class: 'facts', id: 'client-facts' }, facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', { class: typeof v === 'string' && /^[A-Z]{1,2}\d{4}A\d{5}/.test(v) ? 'mono' : '' }, v ?? '—')])),
      h('div', { class: 'actions' }, c.status === 'ACTIVE' ? exportBtn : null),
      status),
    auditPanel(audit.body));
}

function auditPanel(body) {
  if (!body) return null;
  const a = body.audit;
  const m = body.manifest;
  return h('div', { class: 'panel', id: 'audit' },
    h('h2', {}, 'Onboarding audit'),
    a
      ? h('dl', { class: 'facts' },
          h('dt', {}, 'Status'), h('dd', {}, badge(a.status)),
          h('dt', {}, 'By'), h('dd', {}, a.onboardedBy ?? '—'),
          h('dt', {}, 'When'), h('dd', {}, fmtDate(a.onboardedDate)),
          h('dt', {}, 'Last change'), h('dd', {}, fmtDate(a.lastModifiedDate)),
          a.failedStep && [h('dt', {}, 'Failed step'), h('dd', {}, a.failedStep)],
          a.failureReason && [h('dt', {}, 'Reason'), h('dd', {}, a.failureReason)])
      : h('p', { class: 'muted' }, 'No registry entry.'),
    h('h2', {}, 'Manifest reconcile status'),
    m
      ? h('dl', { class: 'facts', id: 'manifest-status' },
          h('dt', {}, 'Manifest'), h('dd', { class: 'mono' }, `${m.key} (${m.path ?? '—'})`),
          h('dt', {}, 'Phase'), h('dd', {}, badge(m.phase)),
          m.message && [h('dt', {}, 'Message'), h('dd', {}, m.message)],
          h('dt', {}, 'Attempts'), h('dd', {}, String(m.attempts)),
          m.nextRetryAt && [h('dt', {}, 'Next retry'), h('dd', {}, fmtDate(m.nextRetryAt))],
          m.lastAppliedRevision && [h('dt', {}, 'Revision'), h('dd', { class: 'mono' }, m.lastAppliedRevision)],
          h('dt', {}, 'Last transition'), h('dd', {}, fmtDate(m.lastTransitionAt)))
      : h('p', { class: 'muted' }, 'No manifest for this client.'));
}
