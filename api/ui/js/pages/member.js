import { call, userPath } from '../api.js';
import { fmtDate, h } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, loadInto } from '../components/async-view.js';
import { scheduleText, when } from '../components/ops-format.js';
import { statusBadge } from '../components/status-badge.js';
import { dashboardPage } from './dashboard.js';
import { dashboardsPage } from './dashboards.js';
import { keysPage } from './keys.js';
import { lastRunCell } from './pipelines.js';

/** The member's own navigation (the top bar's settings links are for admins). */
/** @param {'home' | 'dashboards' | 'keys'} current */
function memberTabs(current) {
  /**
   * @param {string} href
   * @param {string} key
   * @param {string} label
   */
  const tab = (href, key, label) => h('a', { href, class: 'tab', 'aria-current': current === key ? 'page' : undefined }, label);
  return h('nav', { class: 'tabs', 'aria-label': 'Your pages' }, tab('#/home', 'home', 'Your clients'), tab('#/dashboards', 'dashboards', 'Dashboards'), tab('#/keys', 'keys', 'API keys'));
}

/** The API keys page, with the member's tabs (the client field lists their granted clients). */
/** @param {import('../types.js').ApiSettingsSession} me */
export function memberKeysPage(me) {
  return h('div', {}, memberTabs('keys'), keysPage(me));
}

/** The dashboards of the member's clients, or one of them, with the member's tabs. */
/**
 * @param {string | null} facadeId
 * @param {URLSearchParams} query
 */
export function memberDashboardsPage(facadeId, query) {
  return h('div', {}, memberTabs('dashboards'), facadeId ? dashboardPage(facadeId, query) : dashboardsPage(query, { member: true }));
}

const readOnly = () => h('span', { class: 'tag', title: 'Members see their clients; changes are made by administrators' }, 'Read-only');

/** A member's home: the clients granted to them (read-only). */
/** @param {import('../types.js').ApiSettingsSession} me */
export function memberHomePage(me) {
  const box = h('div', { id: 'member-clients' });
  loadInto(box, async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiClientList>} */
    const r = await call('GET', `${userPath('/v1/bi/admin/clients/')}?limit=1000`);
    return r.body.data ?? [];
  }, (clients) => {
    if (!clients.length) return emptyState('No clients granted to you yet', 'Ask an administrator to grant you the clients you work on. Your API keys are under API keys.', h('a', { class: 'button secondary', href: '#/keys' }, 'API keys'));
    return dataTable({
      caption: 'Your clients',
      id: 'member-client-table',
      columns: [{ label: 'Client' }, { label: 'Status' }, { label: 'Connection' }, { label: 'Onboarded' }],
      rows: clients.map((c) => ({
        attrs: { dataset: { client: c.clientId } },
        cells: [
          h('div', { class: 'name-cell' }, h('a', { href: `#/clients/${encodeURIComponent(c.clientId)}`, class: 'strong' }, c.clientName || c.clientId), h('span', { class: 'mono muted small' }, c.clientId)),
          statusBadge(c.status === 'ACTIVE' ? 'active' : c.status === 'FAILED' ? 'failed' : 'off', c.status),
          h('span', { class: 'mono' }, c.dbId ?? '—'),
          when(c.onboardedDate),
        ],
      })),
    });
  }, { what: 'your clients' });
  return h('section', { id: 'member-home', 'aria-labelledby': 'member-h' },
    memberTabs('home'),
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', { id: 'member-h' }, 'Your clients'),
        h('p', { class: 'muted lead' }, `Signed in as ${me.username}. You see the clients granted to you, read-only. Settings (onboarding, pipelines, connections, users) are available to administrators only.`)),
      readOnly()),
    box);
}

/** A granted client, read-only: its registry record and its pipelines with their last runs. */
/** @param {string} clientId */
export function memberClientPage(clientId) {
  const box = h('div', { id: 'member-client' });
  loadInto(box, async () => {
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiClientRead>>} */
    const record = call('GET', userPath(`/v1/bi/admin/clients/${encodeURIComponent(clientId)}/`));
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiPipelineList>>} */
    const listed = call('GET', userPath('/v1/bi/admin/pipelines/'));
    /** @type {Promise<{body: Pick<import('../types.js').ApiDashboardList, 'dashboards'>}>} */
    const drawn = call('GET', `${userPath('/v1/bi/admin/dashboards/')}?clientId=${encodeURIComponent(clientId)}`);
    const [client, pipelines, dashboards] = await Promise.all([record, listed, drawn.catch(() => ({ body: { dashboards: [] } }))]);
    const c = client.body.client;
    return { c, pipelines: pipelines.body.pipelines.filter((p) => p.owner === c.clientId), dashboards: (dashboards.body.dashboards ?? []).filter((d) => d.owner === c.clientId) };
  }, ({ c, pipelines, dashboards }) => {
    const heading = document.getElementById('member-client-h');
    if (heading) heading.textContent = c.clientName || c.clientId;
    const crumb = document.getElementById('member-client-crumb');
    if (crumb) {
      crumb.textContent = c.clientName || c.clientId;
      crumb.classList.remove('mono');
    }
    /** @type {[string, import('../types.js').Child][]} */
    const facts = [
      ['Client ID', h('span', { class: 'mono' }, c.clientId)], ['Status', statusBadge(c.status === 'ACTIVE' ? 'active' : c.status === 'FAILED' ? 'failed' : 'off', c.status)],
      ['Description', c.description || '—'], ['Connection', h('span', { class: 'mono' }, c.dbId ?? '—')], ['Client model', h('span', { class: 'mono' }, c.modelId ?? '—')],
      ['VDM', h('span', { class: 'mono' }, c.vdmId ?? '—')],
      ['Dashboards', dashboards.length ? h('ul', { class: 'plain', id: 'member-client-dashboards' }, dashboards.map((d) => h('li', {}, h('a', { href: `#/dashboards/${encodeURIComponent(d.facadeId)}` }, d.name)))) : '—'],
      ['Onboarded', `${fmtDate(c.onboardedDate)}${c.onboardedBy ? ` by ${c.onboardedBy}` : ''}`], ['Last change', fmtDate(c.lastModifiedDate)],
    ];
    return h('div', {},
      h('div', { class: 'panel' }, h('h2', {}, 'Registry record'), h('dl', { class: 'facts', id: 'member-client-facts' }, facts.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]))),
      h('h2', {}, 'Pipelines'),
      pipelines.length
        ? dataTable({
            caption: `Pipelines of ${c.clientId}`,
            id: 'member-pipeline-table',
            columns: [{ label: 'Pipeline' }, { label: 'Schedule' }, { label: 'Last run' }, { label: 'Next run' }],
            rows: pipelines.map((p) => ({
              cells: [
                h('div', { class: 'name-cell' }, h('span', { class: 'strong' }, p.name), h('span', { class: 'mono muted small' }, p.pipelineId)),
                scheduleText(p.schedule),
                lastRunCell(p.lastRun, { link: false }),
                p.nextRunAt ? when(p.nextRunAt) : '—',
              ],
            })),
          })
        : emptyState('No pipelines', 'This client has no pipelines.'));
  }, { what: 'the client' });
  return h('section', { 'aria-labelledby': 'member-client-h' },
    memberTabs('home'),
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/home' }, 'Your clients'), ' / ', h('span', { class: 'mono', id: 'member-client-crumb', 'aria-current': 'page' }, clientId.toUpperCase())),
    h('div', { class: 'page-head' }, h('h1', { id: 'member-client-h' }, `Client ${clientId.toUpperCase()}`), readOnly()),
    box);
}
