import { ApiError, call, getSession, userPath } from '../api.js';
import { announce, field, fmtDate, h, notice, render } from '../dom.js';
import { emptyState } from '../components/async-view.js';
import { dataTable } from '../components/data-table.js';
import { errorNotice, shortDigest, stateBadge } from '../components/fleet.js';

/** @typedef {import('../types.js').ApiAuditPage} AuditPage */
/** @typedef {Map<string, string>} UserNames */

const enc = encodeURIComponent;
/** @type {readonly ('clientId' | 'actor' | 'action' | 'since' | 'until')[]} */
const FILTERS = ['clientId', 'actor', 'action', 'since', 'until'];
/** Entries per page (`?limit=` in the address overrides it, 1 to 1,000 as the API takes). */
const PAGE = 50;
/** Actions the controller records (the filter takes any; these are offered as suggestions). */
const ACTIONS = ['apply', 'prune', 'client.suspend', 'client.resume', 'client.offboard', 'client.restore', 'client.purge', 'run.start', 'run.cancel',
  'user.create', 'user.update', 'grant.add', 'grant.remove', 'key.create', 'key.revoke', 'login.failed', 'login.lockout'];

/** `2026-11-27T10:05` (a datetime-local input, read as UTC) ⇄ an ISO date-time in the address. */
/** @param {string} local */
const toIso = (local) => (local ? `${local}:00.000Z` : '');
/** @param {string | null} iso */
const toLocal = (iso) => {
  const d = iso ? new Date(iso) : null;
  return d && !Number.isNaN(d.getTime()) ? d.toISOString().slice(0, 16) : '';
};

/**
 * The audit log (`#/audit`): who did what, newest first, filtered by client, actor, action and time
 * (kept in the address, so a filtered view can be shared or reloaded), paged with "Older entries",
 * and exported as NDJSON (the same filters, oldest first).
 */
/** @param {URLSearchParams} query */
export function auditPage(query) {
  const limit = Math.min(1000, Math.max(1, Number(query.get('limit')) || PAGE));
  const inputs = {
    clientId: h('input', { type: 'text', name: 'clientId', value: query.get('clientId') ?? '', autocomplete: 'off', spellcheck: 'false' }),
    actor: h('input', { type: 'text', name: 'actor', value: query.get('actor') ?? '', autocomplete: 'off', spellcheck: 'false' }),
    action: h('input', { type: 'text', name: 'action', value: query.get('action') ?? '', autocomplete: 'off', spellcheck: 'false', list: 'audit-actions' }),
    since: h('input', { type: 'datetime-local', name: 'since', value: toLocal(query.get('since')) }),
    until: h('input', { type: 'datetime-local', name: 'until', value: toLocal(query.get('until')) }),
  };
  const filters = () => {
    const qs = new URLSearchParams();
    for (const k of FILTERS) {
      const v = inputs[k].value.trim();
      if (v) qs.set(k, k === 'since' || k === 'until' ? toIso(v) : v);
    }
    return qs;
  };
  /** @param {URLSearchParams} qs */
  const address = (qs) => {
    const q = new URLSearchParams(qs);
    if (limit !== PAGE) q.set('limit', String(limit));
    return `#/audit${q.toString() ? `?${q}` : ''}`;
  };
  const results = h('div', { id: 'audit-results' });
  const exportStatus = h('div', { id: 'audit-export-status', 'aria-live': 'polite' });
  const exportButton = h('button', { type: 'button', class: 'secondary', id: 'audit-export' }, 'Export NDJSON');
  exportButton.addEventListener('click', () => void exportNdjson(filters(), exportButton, exportStatus));

  // Usernames for the user actors (the IDs stay beside them); a failed read leaves the IDs alone.
  /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiUserList>>} */
  const users = call('GET', userPath('/v1/bi/admin/users/'));
  /** @type {Promise<UserNames>} */
  const names = users
    .then((r) => new Map((r.body.users ?? []).map((u) => [u.userId, u.username])))
    .catch(() => new Map());

  let seq = 0;
  /** @param {{focus: boolean}} options */
  const load = async ({ focus }) => {
    const mine = ++seq;
    const qs = filters();
    history.replaceState(null, '', address(qs));
    results.setAttribute('aria-busy', 'true');
    try {
      const [page, userNames] = await Promise.all([fetchPage(qs, null, limit), names]);
      if (mine !== seq) return;
      render(results, entriesView(page, qs, limit, userNames));
      if (focus) /** @type {HTMLElement | null} */ (results.querySelector('#audit-count'))?.focus();
    } catch (err) {
      if (mine !== seq) return;
      render(results, errorNotice(err, 'The audit log could not be read.'));
    } finally {
      if (mine === seq) results.removeAttribute('aria-busy');
    }
  };

  const form = h('form', { class: 'panel filters audit-filters', role: 'search', 'aria-label': 'Filter the audit log', id: 'audit-filters' },
    h('div', { class: 'filter-grid' },
      field('Client ID', inputs.clientId),
      field('Actor', inputs.actor, 'user, key, git, controller or cli; type:id; or an ID'),
      field('Action', inputs.action, 'e.g. client.suspend, apply'),
      field('Since (UTC)', inputs.since),
      field('Until (UTC)', inputs.until)),
    h('datalist', { id: 'audit-actions' }, ACTIONS.map((a) => h('option', { value: a }))),
    h('div', { class: 'actions' },
      h('button', { type: 'submit', id: 'audit-apply' }, 'Apply filters'),
      h('button', { type: 'button', class: 'secondary', id: 'audit-clear', onclick: () => { for (const i of Object.values(inputs)) i.value = ''; void load({ focus: true }); } }, 'Clear'),
      exportButton),
    exportStatus);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void load({ focus: true });
  });
  void load({ focus: false });
  return h('section', { 'aria-labelledby': 'audit-h', class: 'fleet' },
    h('div', { class: 'page-head' },
      h('div', { class: 'title-block' },
        h('h1', { id: 'audit-h' }, 'Audit log'),
        h('p', { class: 'muted lead' }, 'Every change of desired state, lifecycle step, user, key and grant change, failed login, run start and cancel, and purge: who did it, when, and the result. Newest first.'))),
    form,
    results);
}

/**
 * @param {URLSearchParams} qs
 * @param {number | null} cursor
 * @param {number} limit
 * @returns {Promise<AuditPage>}
 */
function fetchPage(qs, cursor, limit) {
  const q = new URLSearchParams(qs);
  q.set('limit', String(limit));
  if (cursor !== null) q.set('cursor', String(cursor));
  /** @type {Promise<import('../types.js').Answer<AuditPage>>} */
  const read = call('GET', `${userPath('/v1/bi/admin/audit/')}?${q}`);
  return read.then((r) => r.body);
}

const COLUMNS = [{ label: 'Seq', class: 'num' }, { label: 'Time' }, { label: 'Actor' }, { label: 'Action' }, { label: 'Client' }, { label: 'Object' }, { label: 'Result' }];

/**
 * `names`: user ID → username, shown for a user actor beside its ID.
 * @param {import('../types.js').ApiAuditEntry[]} entries
 * @param {UserNames} names
 */
function rowsOf(entries, names) {
  return entries.map((e) => ({
    attrs: { dataset: { seq: String(e.seq), action: e.action, result: e.result } },
    cells: [
      String(e.seq),
      h('time', { datetime: e.at }, fmtDate(e.at)),
      h('div', { class: 'name-cell' }, h('span', {}, h('span', { class: 'tag' }, e.actor.type), ' ',
        e.actor.type === 'user' && names.has(e.actor.id) ? [h('strong', { class: 'actor-name' }, names.get(e.actor.id)), ' '] : null,
        h('span', { class: 'mono wrap' }, e.actor.id)),
        e.actor.revision ? h('span', { class: 'small muted' }, 'revision ', shortDigest(e.actor.revision)) : null),
      h('span', { class: 'mono' }, e.action),
      e.clientId ? h('a', { href: `#/clients/${enc(e.clientId)}` }, e.clientId) : h('span', { class: 'muted' }, '—'),
      e.object ? h('div', { class: 'name-cell' }, h('span', { class: 'mono wrap' }, `${e.object.kind}/${e.object.id}`),
        e.before || e.after ? h('span', { class: 'small muted' }, e.before ? ['before ', shortDigest(e.before)] : null, e.before && e.after ? ' · ' : null, e.after ? ['after ', shortDigest(e.after)] : null) : null)
        : h('span', { class: 'muted' }, '—'),
      stateBadge(e.result),
    ],
  }));
}

/**
 * @param {AuditPage} page
 * @param {URLSearchParams} qs
 * @param {number} limit
 * @param {UserNames} names
 */
function entriesView(page, qs, limit, names) {
  const filtered = [...qs.keys()].length > 0;
  if (!page.entries.length) {
    return h('div', {}, h('p', { id: 'audit-count', tabindex: '-1', class: 'visually-hidden' }, 'No entries.'),
      emptyState(filtered ? 'No entry matches' : 'The audit log is empty', filtered ? 'No entry matches these filters: widen the time range or clear a filter.' : 'Entries appear with the first change.'));
  }
  let shown = page.entries.length;
  const count = h('p', { id: 'audit-count', class: 'muted count', tabindex: '-1' });
  /** @param {boolean} more */
  const setCount = (more) => (count.textContent = `${shown} entr${shown === 1 ? 'y' : 'ies'} shown, newest first${more ? '' : ' (the whole log for these filters)'}${filtered ? ', filtered' : ''}.`);
  setCount(page.nextCursor !== null);
  const table = dataTable({ caption: 'Audit entries, newest first', id: 'audit-table', columns: COLUMNS, rows: rowsOf(page.entries, names) });
  const tbody = /** @type {HTMLTableSectionElement} */ (table.querySelector('tbody'));
  const moreStatus = h('div', { 'aria-live': 'polite', class: 'small' });
  let cursor = page.nextCursor;
  const older = h('button', { type: 'button', class: 'secondary', id: 'audit-older' }, 'Older entries');
  older.addEventListener('click', async () => {
    older.disabled = true;
    older.textContent = 'Loading…';
    try {
      const next = await fetchPage(qs, cursor, limit);
      const fresh = dataTable({ caption: '', columns: COLUMNS, rows: rowsOf(next.entries, names) }).querySelectorAll('tbody tr');
      tbody.append(...fresh);
      shown += next.entries.length;
      cursor = next.nextCursor;
      setCount(cursor !== null);
      moreStatus.textContent = `${next.entries.length} older entr${next.entries.length === 1 ? 'y' : 'ies'} added.`;
      if (cursor === null) {
        // The button goes: focus moves to the first entry it brought.
        /** @type {HTMLElement} */
        const first = fresh[0]?.querySelector('td') ?? count;
        first.tabIndex = -1;
        first.focus();
        older.remove();
      }
    } catch (err) {
      moreStatus.replaceChildren(errorNotice(err, 'Older entries could not be read.'));
    } finally {
      older.disabled = false;
      older.textContent = 'Older entries';
    }
  });
  return h('div', {}, count, table, h('div', { class: 'actions' }, cursor !== null ? older : null, moreStatus));
}

/** The export: the API's NDJSON stream (same filters, oldest first) fetched with the session, saved as a file. */
/**
 * @param {URLSearchParams} qs
 * @param {HTMLButtonElement} button
 * @param {HTMLElement} status
 */
async function exportNdjson(qs, button, status) {
  const q = new URLSearchParams(qs);
  q.set('format', 'ndjson');
  q.set('order', 'asc');
  button.disabled = true;
  status.replaceChildren(h('span', { class: 'small' }, 'Preparing the export…'));
  try {
    const s = getSession();
    const res = await fetch(`${userPath('/v1/bi/admin/audit/')}?${q}`, { headers: { accept: 'application/x-ndjson', ...(s ? { CTN: s.csrfToken } : {}) }, credentials: 'same-origin' });
    if (!res.ok) {
      const body = await res.json().catch(() => null);
      throw new ApiError(res.status, body);
    }
    const blob = await res.blob();
    const lines = (await blob.text()).split('\n').filter(Boolean).length;
    const name = `audit-${new Date().toISOString().slice(0, 19).replace(/:/g, '')}.ndjson`;
    const url = URL.createObjectURL(new Blob([blob], { type: 'application/x-ndjson' }));
    const a = h('a', { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
    const text = `Exported ${lines} entr${lines === 1 ? 'y' : 'ies'} to ${name}.`;
    status.replaceChildren(notice('ok', text));
    announce(text);
  } catch (err) {
    status.replaceChildren(errorNotice(err, 'The export failed.'));
  } finally {
    button.disabled = false;
  }
}
