import { call, userPath } from '../api.js';
import { announce, confirmDialog, field, fmtDate, h, notice, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, errorText, loadInto } from '../components/async-view.js';
import { fmtDuration, when } from '../components/ops-format.js';
import { statusBadge } from '../components/status-badge.js';

/** @typedef {import('../types.js').ApiConnectionSummary} ConnectionSummary */

/** @type {Record<string, string>} */
const CREDENTIAL = { passwordEnv: 'Password from an environment variable', secret: 'Encrypted stored password', none: 'No password (trust auth)' };

/** Connections: every stored connection, where it points, its owner, last test and what uses it; Test. */
/** @param {URLSearchParams} [query] */
export function connectionsPage(query) {
  const box = h('div', { id: 'connections' });
  const filter = h('input', { type: 'search', name: 'q', value: query?.get('q') ?? '', placeholder: 'Name, ID, host or client', autocomplete: 'off' });
  const flash = h('div', { id: 'connections-flash' });
  /** @type {ConnectionSummary[]} */
  let latest = [];
  const paint = () => render(box, view(latest, filter.value.trim().toLowerCase(), { flash, reload: () => reload() }));
  filter.addEventListener('input', paint);
  /** @type {() => Promise<void>} */
  const reload = loadInto(box, async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiConnectionList>} */
    const r = await call('GET', userPath('/v1/bi/admin/connections/'));
    return r.body.connections;
  }, (list) => {
    latest = list;
    return view(list, filter.value.trim().toLowerCase(), { flash, reload: () => reload() });
  }, { what: 'connections' });
  return h('section', { 'aria-labelledby': 'connections-h' },
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', { id: 'connections-h' }, 'Connections'), h('p', { class: 'muted lead' }, 'Warehouse connections: where each points, who owns it and what uses it. Passwords are never shown.')),
      h('button', { type: 'button', class: 'secondary', onclick: () => void reload() }, 'Refresh')),
    h('form', { class: 'panel row filters', role: 'search', onsubmit: (e) => e.preventDefault() }, h('div', { class: 'grow' }, field('Filter', filter))),
    flash,
    box);
}

/** @param {ConnectionSummary} c */
const where = (c) => {
  const host = c.host ? `${c.host}${c.port ? `:${c.port}` : ''}` : null;
  const db = [c.database, c.schema].filter(Boolean).join('.');
  return h('div', { class: 'name-cell' },
    host ? h('span', { class: 'mono' }, host) : h('span', { class: 'muted' }, 'No host'),
    db ? h('span', { class: 'mono muted small' }, db) : null,
    c.warehouse ? h('span', { class: 'muted small' }, `warehouse ${c.warehouse}`) : null);
};

/** @param {ConnectionSummary} c */
function ownerOf(c) {
  if (c.shared) return h('span', { class: 'tag', title: 'A platform warehouse any client may use' }, 'Shared');
  if (c.owner) return h('a', { href: `#/clients/${encodeURIComponent(c.owner)}` }, c.owner);
  return h('span', { class: 'muted' }, 'Unowned');
}

/** @param {import('../types.js').ApiConnectionLastTest | null} t */
function lastTest(t) {
  if (!t) return h('span', { class: 'muted' }, 'Never tested');
  return h('div', { class: 'name-cell test-cell' },
    h('span', {}, statusBadge(t.ok ? 'ok' : 'failed', t.ok ? 'ok' : 'failed'), ' ', when(t.at), h('span', { class: 'muted small' }, ` · ${fmtDuration(t.durationMs)}`)),
    h('span', { class: `small ${t.ok ? 'muted' : 'bad-text'}`, title: fmtDate(t.at) }, t.message));
}

/** @param {ConnectionSummary['usedBy']} u */
function usedBy(u) {
  /** @type {HTMLElement[]} */
  const parts = [];
  if (u.clients.length) parts.push(h('li', {}, 'Clients: ', u.clients.map((id, i) => [i ? ', ' : '', h('a', { href: `#/clients/${encodeURIComponent(id)}` }, id)])));
  if (u.vdms.length) parts.push(h('li', { title: u.vdms.map((v) => `${v.name} (${v.vdmId}, ${v.clientId})`).join('\n') }, `VDMs: ${u.vdms.length} (${u.vdms.map((v) => v.name).slice(0, 3).join(', ')}${u.vdms.length > 3 ? '…' : ''})`));
  if (u.pipelines.length) parts.push(h('li', {}, 'Pipelines: ', u.pipelines.map((p, i) => [i ? ', ' : '', h('a', { href: `#/pipelines/${encodeURIComponent(p.pipelineId)}` }, p.name)])));
  return parts.length ? h('ul', { class: 'used-by' }, parts) : h('span', { class: 'muted' }, 'Not used');
}

/**
 * @param {ConnectionSummary[]} list
 * @param {string} q
 * @param {{flash: HTMLElement, reload: () => Promise<void>}} context
 */
function view(list, q, { flash, reload }) {
  if (!list.length) {
    return emptyState('No connections yet', 'Connections come from Connection manifests (connections/*.yaml) or from the New client wizard.', h('a', { class: 'button', href: '#/new' }, 'New client'));
  }
  const shown = q ? list.filter((c) => `${c.name} ${c.connectionId} ${c.host ?? ''} ${c.owner ?? ''} ${c.vendor}`.toLowerCase().includes(q)) : list;
  if (!shown.length) return emptyState('No connection matches', `Nothing matches “${q}”.`);
  return h('div', {},
    h('p', { class: 'muted count' }, `${shown.length} of ${list.length} connection${list.length === 1 ? '' : 's'}`),
    dataTable({
      caption: 'Connections',
      id: 'connection-table',
      columns: [{ label: 'Connection' }, { label: 'Vendor' }, { label: 'Host / database' }, { label: 'Owner' }, { label: 'Last test' }, { label: 'Used by' }, { label: 'Actions', hideLabel: true }],
      rows: shown.map((c) => {
        const status = h('span', { class: 'visually-hidden', 'aria-live': 'polite' });
        const testCell = h('div', {}, lastTest(c.lastTest));
        // Updated in place: the button is never disabled or re-drawn, so keyboard focus stays on it.
        const test = h('button', { type: 'button', class: 'secondary', 'data-action': 'test', 'aria-label': `Test ${c.name || c.connectionId}` }, 'Test');
        test.addEventListener('click', async () => {
          if (test.getAttribute('aria-disabled') === 'true') return;
          test.setAttribute('aria-disabled', 'true');
          test.textContent = 'Testing…';
          status.textContent = `Testing ${c.name}`;
          try {
            /** @type {import('../types.js').Answer<import('../types.js').ApiConnectionTested>} */
            const r = await call('POST', userPath(`/v1/bi/admin/connections/${encodeURIComponent(c.connectionId)}/test/`));
            Object.assign(c, r.body.connection);
            announce(`${c.name}: ${c.lastTest?.ok ? 'connected' : 'failed'}. ${c.lastTest?.message}`);
          } catch (err) {
            c.lastTest = { at: new Date().toISOString(), ok: false, message: errorText(err), durationMs: 0, by: null };
          }
          render(testCell, lastTest(c.lastTest));
          test.textContent = 'Test';
          test.removeAttribute('aria-disabled');
        });
        const label = c.name || c.connectionId;
        const remove = h('button', { type: 'button', class: 'secondary danger-text', 'data-action': 'delete', 'aria-label': `Delete ${label}` }, 'Delete');
        remove.addEventListener('click', () => void deleteConnection(c, { flash, reload }));
        return {
          attrs: { dataset: { connection: c.connectionId } },
          cells: [
            h('div', { class: 'name-cell' },
              h('a', { class: 'strong conn-name', href: `#/connections/${encodeURIComponent(c.connectionId)}`, title: label, 'aria-label': `Edit ${label}` }, label),
              h('span', { class: 'mono muted small' }, c.connectionId), h('span', { class: 'muted small' }, CREDENTIAL[c.credential] ?? '')),
            h('span', { class: 'tag' }, c.vendor),
            where(c),
            ownerOf(c),
            testCell,
            usedBy(c.usedBy),
            h('div', { class: 'row-actions' }, test, h('a', { class: 'button secondary', href: `#/connections/${encodeURIComponent(c.connectionId)}`, 'data-action': 'edit', 'aria-label': `Edit ${label}` }, 'Edit'), remove, status),
          ],
        };
      }),
    }));
}

/** The users a refused delete names, as links (drawn as a refusal, not a failure). */
/** @param {import('../types.js').ApiConnectionUsers} u */
export function usersList(u) {
  const items = [
    ...u.clients.map((id) => h('li', {}, 'Client ', h('a', { href: `#/clients/${encodeURIComponent(id)}` }, id))),
    ...u.vdms.map((v) => h('li', {}, `VDM ${v.name} of `, h('a', { href: `#/clients/${encodeURIComponent(v.clientId)}` }, v.clientId))),
    ...u.dashboards.map((d) => h('li', {}, 'Dashboard ', h('a', { href: `#/dashboards/${encodeURIComponent(d.facadeId)}` }, d.name))),
    ...u.pipelines.map((p) => h('li', {}, 'Pipeline ', h('a', { href: `#/pipelines/${encodeURIComponent(p.pipelineId)}` }, p.name))),
  ];
  return h('ul', { class: 'used-by refusal-list' }, items);
}

/** Delete with a confirmation; refused while in use (409): the users listed, nothing removed. */
/**
 * @param {{connectionId: string, name?: string, credential?: string}} c
 * @param {{flash: HTMLElement, reload: () => unknown, after?: () => unknown}} context
 */
export async function deleteConnection(c, { flash, reload, after }) {
  const label = c.name || c.connectionId;
  /** The 409's body, set by the dialog's action. @type {{body: import('../types.js').ApiConnectionInUse | null}} */
  const refusal = { body: null };
  const yes = await confirmDialog({
    title: `Delete connection ${label}?`,
    text: `Its manifest is removed and the connection ${c.connectionId} with it${c.credential === 'secret' ? ', and its stored password' : ''}. Anything still using it must be changed first: the server refuses otherwise.`,
    confirmLabel: 'Delete connection',
    id: 'delete-connection-dialog',
    action: async () => {
      /** @type {import('../types.js').Answer<import('../types.js').ApiConnectionDeleted | import('../types.js').ApiConnectionInUse>} */
      const r = await call('DELETE', userPath(`/v1/bi/admin/connections/${encodeURIComponent(c.connectionId)}/`), { expect: [200, 409] });
      if (r.status === 409) refusal.body = /** @type {import('../types.js').ApiConnectionInUse} */ (r.body);
    },
  });
  if (!yes) return;
  const refused = refusal.body;
  if (refused) {
    render(flash, h('div', { class: 'notice warn refusal', role: 'alert', id: 'delete-refused', tabindex: '-1' },
      h('strong', {}, `Not deleted: ${label} is in use. `), refused.usedBy ? 'Change or remove these first:' : refused.error,
      refused.usedBy ? usersList(refused.usedBy) : null));
    /** @type {HTMLElement | null} */ (flash.querySelector('#delete-refused'))?.focus();
    return;
  }
  render(flash, notice('ok', `Connection ${label} deleted.`));
  announce(`Connection ${label} deleted`);
  if (after) after();
  else await reload();
}
