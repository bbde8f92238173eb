import { call, errorText, userPath } from '../api.js';
import { badge, debounce, field, fmtDate, h, loadingView, notice, render } from '../dom.js';
import { CLIENT_STATUSES } from '../schema-constants.js';

const STATUSES = ['', ...CLIENT_STATUSES];
/** @typedef {import('../types.js').ApiClientList} ClientList */
/** @typedef {import('../types.js').ApiListedClient} ListedClient */
/** @typedef {{search: string, status: string, page: number, limit: number, sort: string, order: string | null}} RegistryState */
/** @typedef {(focusSort?: string) => Promise<void>} Load */

const LIMITS = [10, 25, 100];
/** The registry's query as last shown: coming back to Clients restores it. */
const LAST_KEY = 'bi-controller.registry-query';
/** @type {{key: keyof ListedClient, label: string, sort?: string, cls: string}[]} */
const COLUMNS = [
  { key: 'clientId', label: 'Client ID', sort: 'clientId', cls: 'col-id' },
  { key: 'clientName', label: 'Name', sort: 'clientName', cls: 'col-name' },
  { key: 'status', label: 'Status', sort: 'status', cls: 'col-status' },
  { key: 'dbId', label: 'Connection', cls: 'col-conn hide-narrow' },
  { key: 'modelId', label: 'Model', cls: 'col-model hide-narrow' },
  { key: 'onboardedBy', label: 'Onboarded by', cls: 'col-by hide-narrow' },
  { key: 'onboardedDate', label: 'Onboarded', sort: 'onboardedDate', cls: 'col-date hide-narrow' },
];

/** Settings → Clients: the registry with search (regular expression), status filter, sorting, counts and pagination. */
/** @param {URLSearchParams} query */
export function clientsPage(query) {
  if (![...query.keys()].length) {
    const last = sessionStorage.getItem(LAST_KEY);
    if (last) query = new URLSearchParams(last);
  }
  /** @type {RegistryState} */
  const state = {
    search: query.get('search') ?? '',
    status: query.get('status') ?? '',
    page: Math.max(1, Number(query.get('page')) || 1),
    limit: LIMITS.includes(Number(query.get('limit'))) ? Number(query.get('limit')) : 25,
    sort: COLUMNS.find((c) => c.sort && c.sort === query.get('sort'))?.sort ?? 'onboardedDate',
    order: query.get('order') === 'asc' || query.get('order') === 'desc' ? query.get('order') : null,
  };
  const search = h('input', { type: 'search', name: 'search', value: state.search, placeholder: 'ID or name (regular expression)' });
  const status = h('select', { name: 'status' }, STATUSES.map((s) => h('option', { value: s, selected: s === state.status }, s || 'Any status')));
  const limit = h('select', { name: 'limit' }, LIMITS.map((n) => h('option', { value: String(n), selected: n === state.limit }, String(n))));
  const counts = h('p', { class: 'counts', id: 'status-counts', 'aria-live': 'polite' });
  const results = h('div', { id: 'registry', 'aria-live': 'polite' }, loadingView('Loading clients…'));
  const dir = () => state.order ?? (state.sort === 'onboardedDate' ? 'desc' : 'asc');

  let seq = 0;
  /** @type {Load} */
  const load = async (focusSort) => {
    const mine = ++seq;
    const qs = new URLSearchParams({ page: String(state.page), limit: String(state.limit) });
    if (state.status) qs.set('status', state.status);
    if (state.search) qs.set('search', state.search);
    if (state.sort !== 'onboardedDate' || dir() !== 'desc') {
      qs.set('sort', state.sort);
      qs.set('order', dir());
    }
    history.replaceState(null, '', `#/clients?${qs}`);
    sessionStorage.setItem(LAST_KEY, qs.toString());
    results.setAttribute('aria-busy', 'true');
    try {
      /** @type {import('../types.js').Answer<ClientList>} */
      const r = await call('GET', `${userPath('/v1/bi/admin/clients/')}?${qs}`);
      if (mine !== seq) return;
      render(results, table(r.body, state, dir(), load, sortBy));
      if (focusSort) /** @type {HTMLElement | null} */ (results.querySelector(`th[data-sort="${focusSort}"] button`))?.focus();
    } catch (err) {
      if (mine !== seq) return;
      render(results, notice('bad', errorText(err)), h('button', { type: 'button', class: 'secondary', id: 'registry-retry', onclick: () => void load() }, 'Retry'));
    } finally {
      if (mine === seq) results.removeAttribute('aria-busy');
    }
    void loadCounts(mine);
  };
  // "12 active · 1 failed": one cheap count per status (the trigger-kept counts without a search).
  /** @param {number} mine */
  const loadCounts = async (mine) => {
    try {
      const totals = await Promise.all(CLIENT_STATUSES.map(async (st) => {
        const qs = new URLSearchParams({ status: st, limit: '1' });
        if (state.search) qs.set('search', state.search);
        /** @type {import('../types.js').Answer<ClientList>} */
        const r = await call('GET', `${userPath('/v1/bi/admin/clients/')}?${qs}`);
        return /** @type {const} */ ([st, r.body.pagination.total]);
      }));
      if (mine !== seq) return;
      render(counts, totals.map(([st, n], i) => [i ? h('span', { 'aria-hidden': 'true' }, '·') : null, h('span', { dataset: { status: st } }, `${n} ${st.toLowerCase()}`)]));
    } catch {
      if (mine === seq) render(counts);
    }
  };
  /** @param {string} key */
  const sortBy = (key) => {
    if (state.sort === key) state.order = dir() === 'asc' ? 'desc' : 'asc';
    else {
      state.sort = key;
      state.order = key === 'onboardedDate' ? 'desc' : 'asc';
    }
    state.page = 1;
    void load(key);
  };
  const reload = debounce(() => {
    state.page = 1;
    void load();
  }, 250);
  search.addEventListener('input', () => {
    state.search = search.value.trim();
    reload();
  });
  status.addEventListener('change', () => {
    state.status = status.value;
    state.page = 1;
    void load();
  });
  limit.addEventListener('change', () => {
    state.limit = Number(limit.value);
    state.page = 1;
    void load();
  });
  void load();
  return h('section', { 'aria-labelledby': 'clients-h' },
    h('div', { class: 'page-head' },
      h('h1', { id: 'clients-h' }, 'Clients'),
      h('a', { class: 'button', href: '#/new' }, 'New client'),
      h('a', { class: 'button secondary', href: '#/import' }, 'Import')),
    h('form', { class: 'panel row', role: 'search', 'aria-label': 'Filter clients', onsubmit: (e) => e.preventDefault() },
      h('div', { class: 'grow' }, field('Search', search)),
      h('div', {}, field('Status', status)),
      h('div', {}, field('Per page', limit))),
    counts,
    results);
}

/**
 * @param {ClientList} body
 * @param {RegistryState} state
 * @param {string} dir
 * @param {Load} load
 * @param {(key: string) => void} sortBy
 */
function table(body, state, dir, load, sortBy) {
  const rows = body.data ?? [];
  const p = body.pagination ?? { page: state.page, limit: state.limit, total: rows.length, totalPages: 1 };
  if (rows.length === 0) {
    return h('div', { class: 'panel' }, h('p', {}, p.total > 0 ? 'No clients on this page.' : 'No clients match.'), pager(p, state, load));
  }
  /** @param {string} id */
  const open = (id) => `#/clients/${encodeURIComponent(id)}`;
  /**
   * @param {ListedClient} c
   * @param {(typeof COLUMNS)[number]} col
   */
  const cell = (c, col) => {
    if (col.key === 'clientId') return h('a', { href: open(c.clientId) }, c.clientId);
    if (col.key === 'status') return badge(c.status);
    if (col.key === 'onboardedDate') return fmtDate(c.onboardedDate);
    return c[col.key] ?? '—';
  };
  return h('div', {},
    h('div', { class: 'table-wrap' },
      h('table', { class: 'fixed registry' },
        h('caption', { class: 'visually-hidden' }, 'Client registry; column headers with a button sort the list'),
        h('colgroup', {}, COLUMNS.map((c) => h('col', { class: c.cls }))),
        h('thead', {}, h('tr', {}, COLUMNS.map((c) => {
          const sorted = c.sort && state.sort === c.sort;
          return h('th', { scope: 'col', class: c.cls, 'aria-sort': c.sort ? (sorted ? (dir === 'asc' ? 'ascending' : 'descending') : 'none') : null, dataset: c.sort ? { sort: c.sort } : {} },
            c.sort ? h('button', { type: 'button', class: 'sort', onclick: () => sortBy(c.sort ?? '') }, c.label) : c.label);
        }))),
        h('tbody', {}, rows.map((c) => h('tr', {
          class: 'clickable',
          dataset: { client: c.clientId },
          // The whole row opens the client; the ID cell's link is the keyboard's way.
          onclick: (e) => {
            if (e.target instanceof Element && e.target.closest('a, button')) return;
            if (window.getSelection()?.toString()) return;
            location.hash = open(c.clientId);
          },
        }, COLUMNS.map((col) => h('td', { class: `${col.cls}${col.key === 'dbId' || col.key === 'modelId' ? ' mono' : ''}` }, cell(c, col)))))))),
    pager(p, state, load));
}

/**
 * @param {ClientList['pagination']} p
 * @param {RegistryState} state
 * @param {Load} load
 */
function pager(p, state, load) {
  /** @param {number} page */
  const go = (page) => () => {
    state.page = page;
    void load();
  };
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', class: 'secondary', disabled: p.page <= 1, onclick: go(p.page - 1) }, 'Previous'),
    h('span', { id: 'page-info' }, `Page ${p.page} of ${Math.max(1, p.totalPages)} · ${p.total} client${p.total === 1 ? '' : 's'}`),
    h('button', { type: 'button', class: 'secondary', disabled: p.page >= p.totalPages, onclick: go(p.page + 1) }, 'Next'));
}
