import { ApiError, call, userPath } from '../api.js';
import { badge, debounce, field, fmtDate, h, notice, render } from '../dom.js';
import { CLIENT_STATUSES } from '../schema-constants.js';

const STATUSES = ['', ...CLIENT_STATUSES];
const LIMITS = [10, 25, 100];

/** Settings → Clients: the registry with search (regular expression), status filter and pagination. */
export function clientsPage(query) {
  const state = {
    search: query.get('search') ?? '',
    status: query.get('status') ?? '',
    page: Math.max(1, Number(query.get('page')) || 1),
    limit: LIMITS.includes(Number(query.get('limit'))) ? Number(query.get('limit')) : 25,
  };
  const search = h('input', { type: 'search', name: 'search', value: state.search, placeholder: 'ID or name (regular expression)' });
  const status = h('select', { name: 'status' }, STATUSES.map((s) => h('option', { value: s, selected: s === state.status }, s || 'Any status')));
  const limit = h('select', { name: 'limit' }, LIMITS.map((n) => h('option', { value: String(n), selected: n === state.limit }, String(n))));
  const results = h('div', { id: 'registry', 'aria-live': 'polite' });

  const load = async () => {
    const qs = new URLSearchParams({ page: String(state.page), limit: String(state.limit) });
    if (state.status) qs.set('status', state.status);
    if (state.search) qs.set('search', state.search);
    history.replaceState(null, '', `#/clients?${qs}`);
    results.setAttribute('aria-busy', 'true');
    try {
      const r = await call('GET', `${userPath('/v1/bi/admin/clients/')}?${qs}`);
      render(results, table(r.body, state, load));
    } catch (err) {
      render(results, notice('bad', err instanceof ApiError ? err.message : String(err)));
    } finally {
      results.removeAttribute('aria-busy');
    }
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
    h('div', { class: 'row' },
      h('h1', { id: 'clients-h', class: 'grow' }, 'Clients'),
      h('a', { class: 'button', href: '#/new' }, 'New client'),
      h('a', { class: 'button secondary', href: '#/import' }, 'Import')),
    h('form', { class: 'panel row', role: 'search', onsubmit: (e) => e.preventDefault() },
      h('div', { class: 'grow' }, field('Search', search)),
      h('div', {}, field('Status', status)),
      h('div', {}, field('Per page', limit))),
    results);
}

function table(body, state, load) {
  const rows = body.data ?? [];
  const p = body.pagination ?? { page: state.page, limit: state.limit, total: rows.length, totalPages: 1 };
  if (rows.length === 0) {
    return h('div', { class: 'panel' }, h('p', {}, p.total > 0 ? 'No clients on this page.' : 'No clients match.'), pager(p, state, load));
  }
  return h('div', {},
    h('div', { class: 'table-wrap' },
      h('table', {},
        h('caption', { class: 'visually-hidden' }, 'Client registry'),
        h('thead', {}, h('tr', {},
          h('th', { scope: 'col' }, 'Client ID'), h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Status'),
          h('th', { scope: 'col', class: 'hide-narrow' }, 'Connection'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Model'),
          h('th', { scope: 'col', class: 'hide-narrow' }, 'Onboarded by'), h('th', { scope: 'col' }, 'Onboarded'))),
        h('tbody', {}, rows.map((c) => h('tr', { dataset: { client: c.clientId } },
          h('td', {}, h('a', { href: `#/clients/${encodeURIComponent(c.clientId)}` }, c.clientId)),
          h('td', {}, c.clientName),
          h('td', {}, badge(c.status)),
          h('td', { class: 'mono hide-narrow' }, c.dbId ?? '—'),
          h('td', { class: 'mono hide-narrow' }, c.modelId ?? '—'),
          h('td', { class: 'hide-narrow' }, c.onboardedBy ?? '—'),
          h('td', {}, fmtDate(c.onboardedDate))))))),
    pager(p, state, load));
}

function pager(p, state, load) {
  const go = (page) => () => {
    state.page = page;
    void load();
  };
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', class: 'secondary', disabled: p.page <= 1, onclick: go(p.page - 1) }, 'Previous'),
    h('span', { id: 'page-info' }, `Page ${p.page} of ${Math.max(1, p.totalPages)} · ${p.total} client${p.total === 1 ? '' : 's'}`),
    h('button', { type: 'button', class: 'secondary', disabled: p.page >= p.totalPages, onclick: go(p.page + 1) }, 'Next'));
}
