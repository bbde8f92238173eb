import { call, userPath } from '../api.js';
import { field, fmtDate, h, render } from '../dom.js';
import { asyncView } from '../components/async-view.js';
import { chartIcon, chartTypeName } from '../components/chart-icon.js';

/** @typedef {import('../types.js').ApiDashboardSummary} DashboardSummary */

const enc = encodeURIComponent;

/**
 * Dashboards (`#/dashboards?client=ACME&q=sales`): every dashboard the user may see (a member: those
 * of their granted clients), filtered by client and name; clients shown by their display names.
 * @param {URLSearchParams} query
 * @param {{member?: boolean}} [options]
 */
export function dashboardsPage(query, { member = false } = {}) {
  const state = { client: (query.get('client') ?? '').toUpperCase(), q: query.get('q') ?? '' };
  /** @param {{dashboards: DashboardSummary[], names: Map<string, string>}} data */
  const draw = ({ dashboards, names }) => {
    /** @param {string} id */
    const nameOf = (id) => names.get(id) || id;
    const owners = [...new Set(dashboards.map((d) => d.owner ?? ''))].sort((a, b) => nameOf(a).localeCompare(nameOf(b)));
    const client = h('select', { name: 'client' },
      h('option', { value: '' }, 'All clients'),
      owners.map((o) => h('option', { value: o, selected: o === state.client }, o ? nameOf(o) : '(no client)')));
    const q = h('input', { type: 'search', name: 'q', value: state.q, placeholder: 'Dashboard name' });
    const results = h('div', { id: 'dashboards-results', 'aria-live': 'polite' });
    const paint = () => {
      const qs = new URLSearchParams();
      if (state.client) qs.set('client', state.client);
      if (state.q) qs.set('q', state.q);
      history.replaceState(null, '', `#/dashboards${qs.size ? `?${qs}` : ''}`);
      const needle = state.q.toLowerCase();
      const rows = dashboards.filter((d) => (!state.client || (d.owner ?? '') === state.client) && (!needle || d.name.toLowerCase().includes(needle)));
      render(results, rows.length ? table(rows, nameOf) : emptyState(dashboards.length, member));
    };
    client.addEventListener('change', () => {
      state.client = client.value;
      paint();
    });
    q.addEventListener('input', () => {
      state.q = q.value.trim();
      paint();
    });
    paint();
    return h('div', {},
      h('form', { class: 'panel filters', role: 'search', 'aria-label': 'Filter dashboards', onsubmit: (e) => e.preventDefault() },
        h('div', { class: 'grow' }, field('Name', q)),
        h('div', {}, field('Client', client))),
      results);
  };
  return h('section', { 'aria-labelledby': 'dashboards-h', class: 'tenants' },
    h('header', { class: 'page-head' },
      h('div', { class: 'title-block' }, h('h1', { id: 'dashboards-h' }, 'Dashboards'), h('p', { class: 'subtitle muted' }, 'Every dashboard of the clients you can see, drawn from its stored layout.'))),
    asyncView({ load: () => loadDashboards(), draw, label: 'dashboards', id: 'dashboards-view' }));
}

/** The dashboards the caller may see and the display names of their clients. */
async function loadDashboards() {
  /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiDashboardList>>} */
  const listed = call('GET', userPath('/v1/bi/admin/dashboards/'));
  /** @type {Promise<{body: Pick<import('../types.js').ApiClientList, 'data'>}>} */
  const named = call('GET', `${userPath('/v1/bi/admin/clients/')}?limit=1000`);
  const [dashboards, clients] = await Promise.all([listed, named.catch(() => ({ body: { data: [] } }))]);
  return { dashboards: dashboards.body.dashboards, names: new Map((clients.body.data ?? []).map((c) => [c.clientId, c.clientName])) };
}

/**
 * @param {number} total
 * @param {boolean} member
 */
function emptyState(total, member) {
  return h('div', { class: 'panel empty-state' },
    h('h2', {}, total ? 'No dashboard matches' : 'No dashboards yet'),
    h('p', {}, total ? 'Change the name or the client filter.' : member ? 'Your clients have no dashboards yet.' : 'Dashboards come with an onboarding package or an import.'),
    total || member ? null : h('a', { class: 'button', href: '#/new' }, 'Onboard a client'));
}

/**
 * @param {DashboardSummary[]} rows
 * @param {(id: string) => string} nameOf
 */
function table(rows, nameOf) {
  return h('div', { class: 'table-wrap panel flush' },
    h('table', { id: 'dashboards-table' },
      h('caption', { class: 'visually-hidden' }, 'Dashboards'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Dashboard'), h('th', { scope: 'col' }, 'Client'),
        h('th', { scope: 'col', class: 'num' }, 'Sections'), h('th', { scope: 'col', class: 'num' }, 'Charts'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Chart types'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Updated'))),
      h('tbody', {}, rows.map((d) => {
        const charts = d.sections.flatMap((s) => s.charts);
        const types = [...new Set(charts.map((c) => c.type))];
        return h('tr', { dataset: { facade: d.facadeId } },
          h('td', {}, h('a', { href: `#/dashboards/${enc(d.facadeId)}`, class: 'strong' }, d.name), h('div', { class: 'mono small muted' }, d.facadeId)),
          h('td', {}, d.owner ? h('a', { href: `#/clients/${enc(d.owner)}` }, nameOf(d.owner)) : h('span', { class: 'muted' }, 'none')),
          h('td', { class: 'num' }, String(d.sections.length)),
          h('td', { class: 'num' }, String(charts.length)),
          h('td', { class: 'hide-narrow' }, h('span', { class: 'icons', title: types.map(chartTypeName).join(', ') }, types.map((t) => chartIcon(t, { size: 18 })), h('span', { class: 'visually-hidden' }, types.map(chartTypeName).join(', ')))),
          h('td', { class: 'hide-narrow' }, fmtDate(d.updatedAt)));
      }))));
}
