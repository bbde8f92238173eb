import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ADMIN, startHarness, type Harness, signIn } from './harness.ts';

/**
 * The console's tenant pages end to end in headless Chromium against the real server: a
 * client's page with its resources and links, the drawn dashboard (grid positions, tabs by
 * keyboard, a drill-down), retry, export, offboard with its confirmation, the dashboards list and
 * the manifests page with filters and a confirmed mass prune. Data comes as manifests in the
 * watched folder (the GitOps way), synced through the runtime.
 */

const ACME_DB = 'D2026A00101';
const GLOBEX_DB = 'D2026A00102';
const SALES_VDM = { name: 'Sales', selectedColumns: ['region', 'product', 'order_date', 'revenue', 'quantity'] };
const LONG_NAME = 'Quarterly revenue and fulfilment performance across every region, product line and sales channel of the group';

function clientPackage(clientId: string, connectionId: string, extra: Record<string, unknown> = {}) {
  return {
    clientId,
    clientName: `${clientId} Retail`,
    description: `${clientId} is onboarded by the console e2e suite`,
    connectionId,
    coreModelId: 'SM2026A00001',
    vdm: [SALES_VDM, { name: 'Customers', selectedColumns: ['customer_id', 'region'] }],
    dashboards: [
      {
        name: `${clientId} sales overview`,
        description: 'Revenue at a glance, then by region and product.',
        sections: [
          {
            name: 'Summary',
            charts: [
              { title: 'Revenue', type: 'kpi', measures: ['revenue'], dimensions: [], grid: { x: 0, y: 0, width: 3, height: 5 } },
              { title: 'Units sold', type: 'kpi', measures: [{ field: 'quantity', aggregation: 'sum' }], dimensions: [], grid: { x: 3, y: 0, width: 3, height: 5 } },
              { title: 'Revenue by region', type: 'bar', measures: ['revenue'], dimensions: ['region'], grid: { x: 0, y: 5, width: 6, height: 10 } },
              { title: 'Revenue by product', type: 'column', measures: ['revenue'], dimensions: ['product'], drillDown: 'Revenue by region', grid: { x: 6, y: 5, width: 6, height: 10 } },
            ],
          },
          { name: 'Trends', charts: [{ title: LONG_NAME, type: 'line', measures: ['revenue'], dimensions: [{ field: 'order_date', isDate: true }] }] },
        ],
      },
    ],
    ...extra,
  };
}

const doc = (kind: string, name: string, spec: unknown) => ({ apiVersion: 'bi.controller/v1', kind, metadata: { name }, spec });

describe('console: clients, dashboards and manifests in a real browser', () => {
  let h: Harness;
  let page: Page;
  let acmeFacade = '';
  let acmePipeline = '';

  const write = (rel: string, content: unknown) => {
    const abs = join(h.manifests, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, typeof content === 'string' ? content : stringify(content));
  };
  const sync = async () => {
    await h.server.runtime.syncNow();
    await h.server.runtime.reconciler.idle();
  };
  const one = (sql: string, ...args: unknown[]) => Object.values(h.server.runtime.db.prepare(sql).get(...args) as Record<string, string>)[0];
  /** No axe violation at 1280 and 390 px, and nothing wider than a 390 px phone (no sideways scrolling). */
  const clean = async (name: string) => {
    expect(await h.check(page, name)).toEqual([]);
    const original = page.viewportSize();
    await page.setViewportSize({ width: 390, height: 844 });
    const wide = await page.evaluate(() =>
      [...document.querySelectorAll('body *')]
        .filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 1 && !e.closest('.table-wrap, .dash-tabs'))
        .map((e) => `${e.tagName.toLowerCase()}${e.id ? `#${e.id}` : ''}.${[...e.classList].join('.')}`)
        .slice(0, 5),
    );
    const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
    if (original) await page.setViewportSize(original);
    expect(wide, `${name}: wider than 390 px`).toEqual([]);
    expect(scroll, `${name}: the page scrolls sideways at 390 px`).toBeLessThanOrEqual(390);
  };

  beforeAll(async () => {
    h = await startHarness();
    write('clients/ACME.yaml', doc('Client', 'ACME', clientPackage('ACME', ACME_DB)));
    write('clients/GLOBEX.yaml', doc('Client', 'GLOBEX', clientPackage('GLOBEX', GLOBEX_DB)));
    // Its core model does not exist yet: it fails until it does.
    write('clients/BROKEN.yaml', doc('Client', 'BROKEN', { ...clientPackage('BROKEN', 'D2026A00107', { dashboards: [] }), coreModelId: 'SM2026A00009' }));
    for (let i = 1; i <= 8; i++) write(`connections/spare-${i}.yaml`, doc('Connection', `spare-${i}`, { connectionId: `D2026A0020${i}`, name: `Spare warehouse ${i}`, vendor: 'POSTGRESQL', host: 'db.internal', shared: true, tenantSchema: 't_{clientId}' }));
    await sync();
    write('pipelines/acme-nightly.yaml', doc('Pipeline', 'acme-nightly', {
      name: 'ACME nightly orders',
      source: { connectionId: ACME_DB, type: 'database' },
      destination: { connectionId: ACME_DB },
      steps: [{ type: 'load', config: { tableName: 'orders' } }],
    }));
    write('dashboards/broken.yaml', 'kind: Dashboard\nthis is: [not valid');
    await sync();
    acmeFacade = one("SELECT facade_id FROM facades WHERE client_id = 'ACME'");
    acmePipeline = one("SELECT pipeline_id FROM pipelines WHERE manifest_key = 'Pipeline/acme-nightly'");
    ({ page } = await h.newPage());
    await signIn(page, ADMIN);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('shows a client with its resources by name, linked, and its manifests\' status', async () => {
    await page.goto('/ui/#/clients/ACME');
    await page.waitForSelector('#client-overview');
    expect(await page.textContent('#client-h')).toBe('ACME Retail');
    expect(await page.textContent('#client-connection')).toContain(ACME_DB);
    expect(await page.textContent('#client-model')).toContain('SM2026A00001');
    const vdms = await page.$$eval('#client-vdms li[data-vdm]', (lis) => lis.map((li) => [li.querySelector('h3')?.textContent, [...li.querySelectorAll('.chip')].map((c) => c.textContent)]));
    expect(vdms).toEqual([['Sales', SALES_VDM.selectedColumns], ['Customers', ['customer_id', 'region']]]);
    expect(await page.getAttribute(`#client-dashboards a[href="#/dashboards/${acmeFacade}"]`, 'href')).toBe(`#/dashboards/${acmeFacade}`);
    expect(await page.$$eval('#client-dashboards .section-link', (as) => as.map((a) => a.textContent))).toEqual(['Summary', 'Trends']);
    expect(await page.$$eval('#client-dashboards .chart-chip', (cs) => cs.map((c) => c.textContent))).toEqual(['Revenue', 'Units sold', 'Revenue by region', 'Revenue by product', LONG_NAME]);
    expect(await page.getAttribute('#client-pipelines a', 'href')).toBe(`#/pipelines/${acmePipeline}`);
    const manifests = await page.$$eval('#client-manifests li[data-key]', (lis) => lis.map((li) => `${li.dataset.key}:${li.dataset.phase}`));
    expect(manifests.sort()).toEqual(['Client/ACME:Synced', 'Pipeline/acme-nightly:Synced']);
    expect(await page.isVisible('#retry')).toBe(false);
    expect(await page.textContent('#connection-test')).toContain('Not tested from the console yet.');
    // Test again: the stored connection has no account URL, so the answer comes without any network.
    await page.click('#test-again');
    await page.waitForSelector('#connection-test [data-ok=false]');
    expect(await page.textContent('#connection-test')).toContain('An account URL such as https://<account>.snowflakecomputing.com is required');
    await clean('t01-client');
  });

  it('opens the dashboard from the client page and draws its grid: positions, tabs by keyboard, a drill-down', async () => {
    await page.click(`#client-dashboards a[href="#/dashboards/${acmeFacade}"]`);
    await page.waitForSelector('.dash-grid .tile');
    expect(await page.textContent('#dashboard-h')).toBe('ACME sales overview');
    const box = async (title: string) => {
      const b = await page.locator('.dash-panel:not([hidden]) .tile', { has: page.locator(`h3:text-is("${title}")`) }).boundingBox();
      if (!b) throw new Error(`no tile ${title}`);
      return b;
    };
    const region = await box('Revenue by region');
    const product = await box('Revenue by product');
    const revenue = await box('Revenue');
    const units = await box('Units sold');
    // x=6 is right of x=0 on the same row; y=5 is below y=0; width 6 is half of the 12 columns.
    expect(product.x).toBeGreaterThan(region.x + region.width - 1);
    expect(Math.abs(product.y - region.y)).toBeLessThan(1);
    expect(region.y).toBeGreaterThan(revenue.y + revenue.height - 1);
    expect(units.x).toBeGreaterThan(revenue.x + revenue.width - 1);
    // 6 columns are two 3-column cards and the gap between them.
    expect(Math.abs(region.width - 2 * units.width)).toBeLessThan(12);
    expect(await page.$$eval('.dash-panel:not([hidden]) .tile', (ts) => ts.map((t) => t.querySelector('.chart-icon')?.getAttribute('data-family')))).toEqual(['kpi', 'kpi', 'hbar', 'column']);
    await clean('t02-dashboard');

    // Tabs: arrow keys move the selection and the focus; the other panel shows.
    await page.focus('[role=tab][aria-selected=true]');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-section'))).toBe('Trends');
    expect(await page.getAttribute('[role=tab][data-section=Trends]', 'aria-selected')).toBe('true');
    await page.waitForSelector(`.dash-panel:not([hidden]) h3:text-is("${LONG_NAME}")`);
    await clean('t03-dashboard-trends');
    await page.keyboard.press('ArrowLeft');
    expect(await page.getAttribute('[role=tab][data-section=Summary]', 'aria-selected')).toBe('true');

    // The bar chart drills down to the column chart: its link selects and focuses the target.
    const drill = page.locator('.tile a.drill', { hasText: 'Revenue by product' });
    expect(await drill.getAttribute('href')).toMatch(new RegExp(`^#/dashboards/${acmeFacade}\\?section=Summary&chart=chart_\\d+$`));
    await drill.click();
    await page.waitForSelector('.tile.highlight');
    expect(await page.textContent('.tile.highlight h3')).toBe('Revenue by product');
    expect(await page.evaluate(() => document.activeElement?.classList.contains('highlight'))).toBe(true);
    expect(page.url()).toContain('chart=');
    // The address opens at the target: a reload keeps the drill-down.
    await page.reload();
    await page.waitForSelector('.tile.highlight');
    expect(await page.textContent('.tile.highlight h3')).toBe('Revenue by product');
  });

  it('links a client\'s section to the dashboard at that section', async () => {
    await page.goto('/ui/#/clients/ACME');
    await page.click('#client-dashboards .section-link:text-is("Trends")');
    await page.waitForSelector('[role=tab][data-section=Trends][aria-selected=true]');
    expect(page.url()).toContain('section=Trends');
  });

  it('lists the dashboards, filtered by client and by name; a failed load offers Retry', async () => {
    // The server fails once: the page says so (never the previous page) and Retry loads it.
    const failing = '**/v1/bi/admin/dashboards/**';
    await page.route(failing, (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"success":false,"error":"Internal server error"}' }));
    await page.click('#nav >> text=Dashboards');
    await page.waitForSelector('.load-error');
    expect(await page.textContent('.load-error')).toContain('Could not load dashboards. Internal server error (HTTP 500)');
    // The page before (a dashboard) is gone at once, not kept while loading.
    expect(await page.isVisible('#dashboard-h')).toBe(false);
    await clean('t04-dashboards-error');
    await page.unroute(failing);
    await page.click('.load-error >> text=Retry');
    await page.waitForSelector('#dashboards-table');
    const owners = () => page.$$eval('#dashboards-table tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
    // Clients by their display names (the filter's value stays the ID).
    expect((await owners()).sort()).toEqual(['ACME Retail', 'GLOBEX Retail']);
    await clean('t04-dashboards');
    await page.selectOption('select[name=client]', 'GLOBEX');
    expect(await owners()).toEqual(['GLOBEX Retail']);
    expect(page.url()).toContain('client=GLOBEX');
    await page.selectOption('select[name=client]', '');
    await page.fill('input[name=q]', 'acme');
    expect(await owners()).toEqual(['ACME Retail']);
    await page.fill('input[name=q]', 'no such dashboard');
    await page.waitForSelector('text=No dashboard matches');
    await page.fill('input[name=q]', '');
    expect(await page.$$eval('#dashboards-table tbody tr td:nth-child(3)', (tds) => tds.map((td) => td.textContent))).toEqual(['2', '2']);
  });

  it('exports a client as its onboarding package', async () => {
    await page.goto('/ui/#/clients/ACME');
    await page.waitForSelector('#export');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
    const file = join(h.dir, 'ACME.json');
    await download.saveAs(file);
    const pkg = JSON.parse(readFileSync(file, 'utf8'));
    expect(pkg).toMatchObject({ clientId: 'ACME', clientName: 'ACME Retail', connectionId: ACME_DB });
    expect(pkg.dashboards[0].sections.map((s: { name: string }) => s.name)).toEqual(['Summary', 'Trends']);
    await page.waitForSelector('#client-flash .notice.ok');
  });

  it('retries a failed client once its cause is fixed', async () => {
    await page.goto('/ui/#/clients/BROKEN');
    await page.waitForSelector('#client-failure');
    expect(await page.textContent('#client-failure')).toContain('create model');
    expect(await page.textContent('#client-failure')).toContain('SM2026A00009');
    await clean('t05-client-failed');
    // The fix: the missing core model arrives in the folder.
    write('core-models/late.yaml', doc('CoreModel', 'late-core', { modelId: 'SM2026A00009', name: 'Late core model', definition: { columns: ['region'] } }));
    await expect.poll(() => h.server.runtime.reconciler.status.get('CoreModel/late-core')?.phase, { timeout: 15_000 }).toBe('Synced');
    await page.click('#retry');
    await page.waitForSelector('#client-flash .notice.ok');
    expect(await page.textContent('#client-flash')).toContain('Client/BROKEN is Synced.');
    await page.waitForSelector('#client-overview');
    expect(await page.isVisible('#client-failure')).toBe(false);
    expect(await page.textContent('#client-overview')).toContain('ACTIVE');
  });

  it('offboards a client after a typed confirmation that names what a purge would remove; its resources are kept until then', async () => {
    await page.goto('/ui/#/clients/GLOBEX');
    await page.waitForSelector('#offboard');
    await page.click('#offboard');
    await page.waitForSelector('#offboard-dialog[open]');
    // Cancel has the focus; Escape closes and nothing happens.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await page.keyboard.press('Escape');
    await page.waitForSelector('#offboard-dialog', { state: 'detached' });
    expect(existsSync(join(h.manifests, 'clients/GLOBEX.yaml'))).toBe(true);

    await page.click('#offboard');
    await page.waitForSelector('#offboard-dialog[open]');
    const removes = await page.$$eval('#offboard-removes li', (lis) => lis.map((li) => li.textContent ?? ''));
    expect(removes[0]).toContain('GLOBEX Retail (GLOBEX)');
    expect(removes.join('\n')).toContain(`Connection GLOBEX warehouse ${GLOBEX_DB}`);
    expect(removes.join('\n')).toContain('VDM Sales');
    expect(removes.join('\n')).toContain('VDM Customers');
    expect(removes.join('\n')).toContain('Dashboard GLOBEX sales overview with 2 section(s) and 5 chart(s)');
    const confirm = page.locator('#offboard-dialog-confirm');
    expect(await confirm.isDisabled()).toBe(true);
    await page.fill('#offboard-dialog input[name=confirm]', 'GLOBE');
    expect(await confirm.isDisabled()).toBe(true);
    await page.fill('#offboard-dialog input[name=confirm]', 'GLOBEX');
    expect(await confirm.isDisabled()).toBe(false);
    await clean('t06-offboard-dialog');
    await confirm.click();
    await page.waitForSelector('#offboard-dialog', { state: 'detached' });
    await page.waitForSelector('#client-flash .notice.ok');
    // Offboarding keeps every resource and ID until restore or purge (docs/contract/design.md, "Tenant lifecycle").
    expect(await page.textContent('#client-flash')).toContain('GLOBEX was offboarded: Client/GLOBEX is Pruned, the client is OFFBOARDED.');
    expect(existsSync(join(h.manifests, 'clients/GLOBEX.yaml'))).toBe(false);
    const db = h.server.runtime.db;
    expect(db.prepare("SELECT status, retain_until IS NOT NULL AS retained FROM clients WHERE client_id = 'GLOBEX'").get()).toEqual({ status: 'OFFBOARDED', retained: 1 });
    for (const table of ['facades', 'vdms', 'semantic_models']) expect((db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE client_id = 'GLOBEX'`).get() as { n: number }).n).toBeGreaterThan(0);
    expect(db.prepare('SELECT COUNT(*) AS n FROM connections WHERE connection_id = ?').get(GLOBEX_DB)).toEqual({ n: 1 });
    await page.waitForSelector('#client-overview');
    expect(await page.isVisible('#offboard')).toBe(false);

    // Gone from the active registry.
    await page.goto('/ui/#/clients?status=ACTIVE');
    await page.waitForSelector('#registry tbody tr');
    expect(await page.$$eval('#registry tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.client).sort())).toEqual(['ACME', 'BROKEN']);
    // An admin still sees the retained client's dashboards until a purge removes them.
    await page.goto('/ui/#/dashboards');
    await page.waitForSelector('#dashboards-table');
    expect(await page.$$eval('#dashboards-table tbody tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent).sort())).toEqual(['ACME Retail', 'GLOBEX Retail']);
  });

  it('shows every manifest failures first, filters by kind and phase', async () => {
    await page.click('#nav >> text=Manifests');
    await page.waitForSelector('#manifests-table');
    const rows = () => page.$$eval('#manifests-table tbody tr', (trs) => trs.map((tr) => `${(tr as HTMLElement).dataset.key}:${(tr as HTMLElement).dataset.phase}`));
    const all = await rows();
    expect(all[0]).toBe('File/dashboards/broken.yaml:Invalid');
    expect(all).toContain('Client/ACME:Synced');
    expect(await page.textContent('#manifests-source')).toContain(h.manifests);
    await clean('t07-manifests');
    await page.selectOption('select[name=kind]', 'Client');
    await expect.poll(async () => (await rows()).sort()).toEqual(['Client/ACME:Synced', 'Client/BROKEN:Synced', 'Client/GLOBEX:Pruned']);
    expect(page.url()).toContain('kind=Client');
    await page.selectOption('select[name=phase]', 'Failed');
    await page.waitForSelector('#manifests-empty');
    expect(await page.textContent('#manifests-empty')).toContain('No manifest matches');
    await page.selectOption('select[name=kind]', '');
    await page.click('.phase-button[data-phase=Invalid]');
    await expect.poll(rows).toEqual(['File/dashboards/broken.yaml:Invalid']);
    expect(await page.inputValue('select[name=phase]')).toBe('Invalid');
    await page.selectOption('select[name=phase]', '');
  });

  it("previews the wizard's starter dashboard before it exists, placed by the applier's rules", async () => {
    await page.click('#nav >> text=New client');
    await page.waitForSelector('#wizard-h');
    await page.fill('input[name=clientId]', 'preview');
    await page.waitForSelector('#client-id-status[data-state=free]');
    await page.fill('input[name=clientName]', 'Preview Ltd');
    await page.click('#next');
    await page.waitForSelector('h2:text("2. Data source")');
    await page.selectOption('select[name=vendor]', 'POSTGRESQL');
    for (const [name, value] of [['host', '127.0.0.1'], ['database', 'test'], ['schema', 'public'], ['username', 'nobody']]) await page.fill(`input[name=${name}]`, value);
    // The wizard asks for a successful connection test or this explicit choice (settings-ui tests the test itself).
    await page.check('input[name=ackNoTest]');
    await page.click('#next');
    await page.waitForSelector('h2:text("3. Model and dashboard")');
    await page.selectOption('select[name=coreModelId]', 'SM2026A00001');
    await page.selectOption('select[name=measure]', 'revenue');
    await page.selectOption('select[name=dimension]', 'region');
    await page.waitForSelector('#dashboard-preview .tile');
    const tiles = () => page.$$eval('#dashboard-preview .tile', (ts) => ts.map((t) => [t.querySelector('h3')?.textContent, (t as HTMLElement).dataset.x, (t as HTMLElement).dataset.y, (t as HTMLElement).dataset.w, (t as HTMLElement).dataset.hgt]));
    // A KPI card 3×6 at the top, the bar chart 12×13 below it: the applier's auto layout.
    expect(await tiles()).toEqual([['Total revenue', '0', '0', '3', '6'], ['revenue by region', '0', '6', '12', '13']]);
    await page.selectOption('select[name=dimension]', 'product');
    await expect.poll(async () => (await tiles())[1][0]).toBe('revenue by product');
    await clean('t09-wizard-preview');
    await page.uncheck('input[name=dashboard]');
    await page.waitForSelector('#dashboard-preview .tile', { state: 'detached' });
    // Leaving the wizard with a draft asks first (console-people tests the question itself).
    await page.click('#nav >> text=Manifests');
    await page.click('#leave-wizard [data-action=confirm]');
    await page.waitForSelector('#manifests-table');
  });

  it('holds a mass prune until it is confirmed, naming what would go', async () => {
    await page.click('#nav >> text=Manifests');
    await page.waitForSelector('#manifests-table');
    for (let i = 1; i <= 8; i++) rmSync(join(h.manifests, `connections/spare-${i}.yaml`));
    await page.click('#sync-now');
    await page.waitForSelector('#prune-blocked');
    expect(await page.textContent('#manifests-flash')).toContain('A prune of 8 objects is waiting for confirmation.');
    expect(await page.textContent('#prune-blocked')).toContain('Connection/spare-1');
    expect(h.server.runtime.db.prepare("SELECT COUNT(*) AS n FROM connections WHERE name LIKE 'Spare warehouse %'").get()).toEqual({ n: 8 });
    await clean('t08-prune-blocked');
    await page.click('#review-prune');
    await page.waitForSelector('#prune-dialog[open]');
    expect(await page.$$eval('#prune-keys li', (lis) => lis.map((li) => li.textContent).sort())).toEqual(
      Array.from({ length: 8 }, (_, i) => `Connection/spare-${i + 1}`).sort(),
    );
    await page.fill('#prune-dialog input[name=confirm]', '8');
    await page.click('#prune-dialog-confirm');
    await page.waitForSelector('#prune-dialog', { state: 'detached' });
    await page.waitForSelector('#manifests-flash .notice');
    expect(await page.textContent('#manifests-flash')).toContain('8 pruned');
    expect(await page.isVisible('#prune-blocked')).toBe(false);
    expect(h.server.runtime.db.prepare("SELECT COUNT(*) AS n FROM connections WHERE name LIKE 'Spare warehouse %'").get()).toEqual({ n: 0 });
    expect(h.foreignRequests).toEqual([]);
  });
});
