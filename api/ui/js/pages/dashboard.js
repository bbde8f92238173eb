import { call, userPath } from '../api.js';
import { fmtDate, h } from '../dom.js';
import { asyncView } from '../components/async-view.js';
import { dashboardLayout } from '../components/dashboard-layout.js';
import { inlineFacts } from '../components/facts.js';

const enc = encodeURIComponent;

/**
 * A dashboard's address, optionally at a section and a chart (a drill-down target).
 * @param {string} facadeId
 * @param {string} [section]
 * @param {string} [chart]
 */
export function dashboardHref(facadeId, section, chart) {
  const qs = new URLSearchParams();
  if (section) qs.set('section', section);
  if (chart) qs.set('chart', chart);
  return `#/dashboards/${enc(facadeId)}${qs.size ? `?${qs}` : ''}`;
}

/** A dashboard (`#/dashboards/<facadeId>?section=&chart=`): its layout drawn from the stored grid. */
/**
 * @param {string} facadeId
 * @param {URLSearchParams} query
 */
export function dashboardPage(facadeId, query) {
  /** @returns {Promise<{missing: string} | (import('../types.js').ApiDashboardRead & {missing?: undefined, ownerName: string | undefined})>} */
  const load = async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiDashboardRead>} */
    const r = await call('GET', userPath(`/v1/sdk/dashboards/${enc(facadeId)}/`), { expect: [200, 404] });
    if (r.status !== 200) return { missing: /** @type {import('../types.js').ErrorAnswer | null} */ (r.body)?.error ?? `Dashboard ${facadeId} not found` };
    // The owner by its display name (the ID stays in the link's address).
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiClientRead> | null>} */
    const ownerRead = r.body.owner ? call('GET', userPath(`/v1/bi/admin/clients/${enc(r.body.owner)}/`), { expect: [200, 404] }) : Promise.resolve(null);
    const owner = await ownerRead.catch(() => null);
    return { ...r.body, ownerName: owner?.status === 200 ? owner.body.client?.clientName : undefined };
  };
  /** @param {Awaited<ReturnType<typeof load>>} body */
  const draw = (body) => {
    if (body.missing !== undefined) {
      return h('div', { class: 'panel empty-state', id: 'dashboard-missing' },
        h('h1', { id: 'dashboard-h' }, `Dashboard ${facadeId}`),
        h('div', { class: 'notice bad', role: 'alert' }, body.missing),
        h('p', {}, h('a', { href: '#/dashboards' }, 'Back to dashboards')));
    }
    const d = body.dashboard;
    const crumb = document.getElementById('dashboard-crumb');
    if (crumb) {
      crumb.textContent = d.name;
      crumb.classList.remove('mono');
    }
    const charts = d.sections.reduce((n, s) => n + s.charts.length, 0);
    // The stored grid is complete: the applier placed every chart (the schema's grid type leaves its fields optional).
    const layout = dashboardLayout(/** @type {Parameters<typeof dashboardLayout>[0]} */ (d), {
      section: query.get('section') ?? undefined,
      chart: query.get('chart') ?? undefined,
      idPrefix: 'dash',
      href: (s, c) => dashboardHref(d.facadeId, s.name, c?.chartId),
      // The address follows the drawing, so it can be shared or reloaded.
      onDrill: (s, c) => history.replaceState(null, '', dashboardHref(d.facadeId, s.name, c?.chartId)),
    });
    layout.addEventListener('click', (e) => {
      const tab = e.target instanceof Element ? e.target.closest('[role=tab]') : null;
      if (tab instanceof HTMLElement) history.replaceState(null, '', dashboardHref(d.facadeId, tab.dataset.section));
    });
    return h('div', {},
      h('header', { class: 'page-head' },
        h('div', { class: 'title-block' },
          h('h1', { id: 'dashboard-h' }, d.name),
          h('div', { class: 'subtitle' },
            h('span', { class: 'mono' }, d.facadeId),
            body.owner ? h('a', { href: `#/clients/${enc(body.owner)}`, class: 'badge link-badge', title: body.owner }, body.ownerName || body.owner) : h('span', { class: 'badge muted' }, 'no client'),
            d.isPublic ? h('span', { class: 'badge muted' }, 'public') : null)),
        h('div', { class: 'page-actions' }, h('a', { class: 'button secondary', href: '#/dashboards' }, 'All dashboards'))),
      d.description ? h('p', { class: 'lead' }, d.description) : null,
      inlineFacts([
        ['Sections', String(d.sections.length)],
        ['Charts', String(charts)],
        ['Connection', d.dataSource?.dbId, 'mono'],
        ['VDM', d.dataSource?.vdmId, 'mono'],
        d.tags?.length ? ['Tags', d.tags.join(', ')] : null,
        ['Updated', fmtDate(d.updatedAt)],
      ], { id: 'dashboard-facts' }),
      h('div', { class: 'panel flush dash-frame' }, layout));
  };
  return h('section', { 'aria-labelledby': 'dashboard-h', class: 'tenants dashboard-page' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/dashboards' }, 'Dashboards'), h('span', { 'aria-hidden': 'true' }, ' / '), h('span', { 'aria-current': 'page', class: 'mono', id: 'dashboard-crumb' }, facadeId)),
    asyncView({ load, draw, label: `dashboard ${facadeId}`, id: 'dashboard-view' }));
}
