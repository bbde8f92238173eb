import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ADMIN, ARTIFACTS, findPostgresUser, MEMBER, PG, startHarness, type Harness } from './harness.ts';

/**
 * The settings UI end to end in headless Chromium against the real server: the wizard with a
 * real PostgreSQL data source, the registry, export and import, API keys, and a member's view.
 */
describe('settings UI in a real browser', () => {
  let h: Harness;
  let page: Page;
  let pgUser: string;
  let connectionId: string;
  let exportPath: string;

  beforeAll(async () => {
    pgUser = await findPostgresUser();
    h = await startHarness();
    ({ page } = await h.newPage());
  });
  afterAll(async () => {
    await h?.close();
  });

  const login = async (p: Page, who: { username: string; password: string }) => {
    await p.goto('/ui/');
    await p.waitForSelector('form.login');
    // Keyboard only: the username field has focus, Tab to the password, Enter submits.
    await expect.poll(() => p.evaluate(() => document.activeElement?.getAttribute('name'))).toBe('username');
    await p.keyboard.type(who.username);
    await p.keyboard.press('Tab');
    await p.keyboard.type(who.password);
    await p.keyboard.press('Enter');
  };

  it('logs an admin in and shows the settings', async () => {
    await page.goto('/ui/');
    await page.waitForSelector('form.login');
    await h.shot(page, '01-login');
    await login(page, ADMIN);
    await page.waitForSelector('#clients-h');
    expect(await page.isVisible('#nav')).toBe(true);
    expect(await page.textContent('#who-name')).toBe('admin (admin)');
    await page.waitForSelector('#registry >> text=No clients match.');
    await h.shot(page, '02-clients-empty');
  });

  it('runs the 4-step wizard with a PostgreSQL data source and shows every step live', async () => {
    await page.click('#nav >> text=New client');
    await page.waitForSelector('#wizard-h');
    await page.fill('input[name=clientId]', 'globex');
    await page.waitForSelector('#client-id-status[data-state=free]');
    expect(await page.textContent('#client-id-status')).toBe('GLOBEX is available.');
    await page.fill('input[name=clientName]', 'Globex Corporation');
    await page.fill('textarea[name=description]', 'Created by the e2e suite');
    await h.shot(page, '03-wizard-1-details');
    await page.click('#next');

    await page.waitForSelector('h2:text("2. Data source")');
    expect(await page.inputValue('select[name=vendor]')).toBe('POSTGRESQL');
    await page.fill('input[name=host]', PG.host);
    await page.fill('input[name=port]', String(PG.port));
    await page.fill('input[name=database]', PG.database);
    await page.fill('input[name=schema]', 'no_such_schema');
    await page.fill('input[name=username]', pgUser);
    await page.fill('input[name=password]', 'typed-in-the-wizard');
    await page.click('#test-connection');
    await page.waitForSelector('#test-result[data-connected=false]');
    expect(await page.textContent('#test-result')).toContain('but schema no_such_schema does not exist');
    await page.fill('input[name=schema]', PG.schema);
    await page.click('#test-connection');
    await page.waitForSelector('#test-result[data-connected=true]');
    expect(await page.textContent('#test-result')).toMatch(/^Connected to PostgreSQL .* at 127\.0\.0\.1:5432\/test; schema public found/);
    await h.shot(page, '04-wizard-2-data-source');
    await page.click('#next');

    await page.waitForSelector('h2:text("3. Model and dashboard")');
    expect(await page.inputValue('select[name=coreModelId]')).toBe('SM2026A00001');
    expect(await page.isChecked('input[name=rls]')).toBe(true);
    expect(await page.$$eval('input[name=column]:checked', (els) => els.map((e) => (e as HTMLInputElement).value))).toEqual([
      'region', 'product', 'order_date', 'revenue', 'quantity', 'customer_id',
    ]);
    await page.uncheck('input[name=column][value=customer_id]');
    expect(await page.inputValue('select[name=measure]')).toBe('revenue');
    expect(await page.inputValue('select[name=dimension]')).toBe('region');
    await h.shot(page, '05-wizard-3-model');
    await page.click('#next');

    await page.waitForSelector('h2:text("4. Review and create")');
    const review = await page.textContent('#review');
    expect(review).toContain('GLOBEX — Globex Corporation');
    expect(review).toContain('password typed (stored encrypted)');
    expect(review).not.toContain('typed-in-the-wizard');
    await h.shot(page, '06-wizard-4-review');
    await page.click('#create');
    await page.waitForSelector('#result');
    expect(await page.getAttribute('#result', 'data-outcome')).toBe('COMPLETED');
    // Every step's row was driven by the reconciler's events, and ended done.
    expect(await page.getAttribute('#progress', 'data-live')).toBe('true');
    const steps = await page.$$eval('ul.progress li', (lis) => lis.map((li) => [li.dataset.step, li.dataset.state, li.dataset.seen ?? '']));
    expect(steps).toEqual([
      ['connection', 'done', 'event'],
      ['link', 'done', 'event'],
      ['model', 'done', 'event'],
      ['vdm', 'done', 'event'],
      ['dashboard', 'done', 'event'],
      ['register', 'done', 'event'],
    ]);
    const facts = await page.textContent('#result dl');
    expect(facts).toMatch(/Client IDGLOBEX/);
    expect(facts).toMatch(/StatusACTIVE/);
    connectionId = /Connection(D\d{4}A\d{5})/.exec(facts ?? '')?.[1] ?? '';
    expect(connectionId).toMatch(/^D\d{4}A\d{5}$/);
    expect(facts).toMatch(/VDMsV\d{4}A\d{5}/);
    expect(facts).toMatch(/FacadesF\d{4}A\d{5}/);
    await h.shot(page, '07-wizard-result');

    // What the wizard wrote: a Connection manifest with a secret reference and a Client manifest.
    const conn = readFileSync(join(h.manifests, 'connections', `${connectionId}.yaml`), 'utf8');
    expect(conn).not.toContain('typed-in-the-wizard');
    expect(parse(conn).spec).toMatchObject({ connectionId, vendor: 'POSTGRESQL', host: PG.host, database: PG.database, schema: 'public', username: pgUser, secretRef: expect.stringMatching(/^secret:/) });
    const client = parse(readFileSync(join(h.manifests, 'clients', 'GLOBEX.yaml'), 'utf8'));
    expect(client.spec).toMatchObject({ clientId: 'GLOBEX', connectionId, coreModelId: 'SM2026A00001', security: { enabled: true } });
    const dbDump = JSON.stringify(h.server.runtime.db.prepare('SELECT * FROM secrets').all());
    expect(dbDump).not.toContain('typed-in-the-wizard');
  });

  it('finds the client in the registry, opens it and exports it', async () => {
    await page.click('#nav >> text=Clients');
    await page.waitForSelector('#registry tr[data-client=GLOBEX]');
    await page.fill('input[name=search]', '^glo');
    await page.waitForSelector('#page-info:text("Page 1 of 1 · 1 client")');
    await page.selectOption('select[name=status]', 'FAILED');
    await page.waitForSelector('#registry >> text=No clients match.');
    await page.selectOption('select[name=status]', 'ACTIVE');
    await page.waitForSelector('#registry tr[data-client=GLOBEX]');
    await h.shot(page, '08-registry-search');

    await page.click('#registry a:text("GLOBEX")');
    await page.waitForSelector('#client-facts');
    expect(await page.textContent('#client-facts')).toContain('Globex Corporation');
    expect(await page.textContent('#manifest-status')).toContain('Client/GLOBEX (clients/GLOBEX.yaml)');
    expect(await page.textContent('#manifest-status')).toContain('Synced');
    expect(await page.textContent('#audit')).toContain('ACTIVE');
    await h.shot(page, '09-client-detail');

    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export')]);
    expect(download.suggestedFilename()).toBe('GLOBEX.json');
    exportPath = join(ARTIFACTS, 'GLOBEX.export.json');
    await download.saveAs(exportPath);
    const pkg = JSON.parse(readFileSync(exportPath, 'utf8'));
    expect(pkg).toMatchObject({ clientId: 'GLOBEX', clientName: 'Globex Corporation', connectionId, coreModelId: 'SM2026A00001' });
    expect(pkg.vdm).toHaveLength(1);
    expect(pkg.dashboards).toHaveLength(1);
  });

  it('imports the exported file under another client ID, with live progress', async () => {
    await page.click('#nav >> text=Import');
    await page.waitForSelector('#import-h');
    await page.setInputFiles('input[name=package]', exportPath);
    await page.waitForSelector('#package-summary dl');
    expect(await page.inputValue('input[name=clientId]')).toBe('GLOBEX');
    await page.fill('input[name=clientId]', 'GLOBEX-EU');
    await page.fill('input[name=clientName]', 'Globex Europe');
    // A copy needs its own data source: the original's connection belongs to GLOBEX.
    expect(await page.inputValue('input[name=connectionId]')).toBe('');
    await page.fill('input[name=connectionId]', connectionId);
    await page.click('#import');
    expect(await page.textContent('[role=alert]')).toContain(`${connectionId} belongs to GLOBEX`);
    await page.fill('input[name=connectionId]', 'D2026A00042');
    await h.shot(page, '10-import-ready');
    await page.click('#import');
    await page.waitForSelector('#result');
    expect(await page.getAttribute('#result', 'data-outcome')).toBe('COMPLETED');
    const steps = await page.$$eval('ul.progress li', (lis) => lis.map((li) => [li.dataset.step, li.dataset.state]));
    expect(steps).toEqual([['link', 'done'], ['model', 'done'], ['vdm', 'done'], ['dashboard', 'done'], ['register', 'done']]);
    await h.shot(page, '11-import-result');

    // Same objects as the original, under the new ID.
    const res = await page.evaluate(async () => {
      const s = JSON.parse(sessionStorage.getItem('bi-controller.session') ?? '{}');
      const r = await fetch(`/v1/bi/admin/clients/GLOBEX-EU/export/${s.userId}`, { headers: { CTN: s.csrfToken } });
      return r.json();
    });
    const original = JSON.parse(readFileSync(exportPath, 'utf8'));
    expect(res).toEqual({ ...original, clientId: 'GLOBEX-EU', clientName: 'Globex Europe', connectionId: 'D2026A00042' });
  });

  it('shows the failing step, its reason and the FAILED audit entry when an import fails', async () => {
    const broken = JSON.parse(readFileSync(exportPath, 'utf8'));
    broken.dashboards[0].sections[0].charts[0].measures = [{ field: 'no_such_column', aggregation: 'sum' }];
    const brokenPath = join(ARTIFACTS, 'BROKEN.import.json');
    writeFileSync(brokenPath, JSON.stringify(broken));
    await page.goto('/ui/#/clients');
    await page.click('#nav >> text=Import');
    await page.setInputFiles('input[name=package]', brokenPath);
    await page.fill('input[name=clientId]', 'BROKEN');
    await page.fill('input[name=connectionId]', 'D2026A00043');
    await page.click('#import');
    await page.waitForSelector('#result[data-outcome=FAILED]');
    const states = await page.$$eval('ul.progress li', (lis) => lis.map((li) => [li.dataset.step, li.dataset.state]));
    expect(states).toEqual([['link', 'done'], ['model', 'done'], ['vdm', 'done'], ['dashboard', 'failed'], ['register', 'skipped']]);
    expect(await page.textContent('#result .notice')).toMatch(/^Step deploy dashboard failed: .*no_such_column/);
    await page.waitForSelector('#failed-audit');
    expect(await page.textContent('#failed-audit')).toMatch(/StatusFAILEDFailed stepdeploy dashboard/);
    await h.shot(page, '12-import-failed');
  });

  it('creates an API key, uses it, revokes it and sees it refused', async () => {
    await page.click('#nav >> text=API keys');
    await page.waitForSelector('#keys-h');
    await page.fill('input[name=label]', 'e2e importer');
    await page.fill('input[name=clientId]', 'GLOBEX');
    await page.click('button:text("Create key")');
    await page.waitForSelector('#api-key-value');
    const apiKey = await page.inputValue('#api-key-value');
    expect(apiKey).toMatch(/^bictl_sk_[0-9a-f]{64}$/);
    await page.click('#copy-key');
    await page.waitForSelector('#new-key >> text=Copied.');
    await page.waitForSelector('#key-list tr[data-state=active]');
    expect(await page.textContent('#key-list')).toContain(apiKey.slice(0, 16));
    expect(await page.textContent('#key-list')).not.toContain(apiKey);
    await h.shot(page, '13-api-key-created');

    const dashboard = {
      name: 'Globex revenue',
      dataSource: { dbId: connectionId },
      charts: [{ title: 'Revenue by region', type: 'bar', measures: ['revenue'], dimensions: ['region'] }],
    };
    const use = () =>
      fetch(`${h.url}/v1/sdk/import`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(dashboard) });
    const ok = await use();
    expect(ok.status).toBe(201);
    expect(await ok.json()).toMatchObject({ success: true, facadeId: expect.stringMatching(/^F\d{4}A\d{5}$/) });

    // The list shows when the key was last used.
    await page.reload();
    await page.waitForSelector('#key-list tr[data-state=active]');
    expect(await page.$eval('#key-list tr[data-state=active] td:nth-child(4)', (td) => td.textContent)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    await page.click('#key-list [data-action=revoke]');
    await page.click('#key-list [data-action=confirm-revoke]');
    await page.waitForSelector('#key-list tr[data-state=revoked]');
    await h.shot(page, '14-api-key-revoked');
    const refused = await use();
    expect(refused.status).toBe(401);
    expect(await refused.json()).toEqual({ error: 'Invalid API key' });
  });

  it('is readable on a narrow screen', async () => {
    const { page: narrow } = await h.newPage({ width: 390, height: 844 });
    await login(narrow, ADMIN);
    await narrow.waitForSelector('#registry tr[data-client=GLOBEX]');
    const overflow = await narrow.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await h.shot(narrow, '15-narrow-clients');
    await narrow.goto('/ui/#/new');
    await narrow.waitForSelector('#wizard-h');
    await h.shot(narrow, '16-narrow-wizard');
  });

  it('shows a member no settings', async () => {
    const { page: m } = await h.newPage();
    await login(m, MEMBER);
    await m.waitForSelector('#member-home');
    expect(await m.isVisible('#nav')).toBe(false);
    expect(await m.textContent('#member-home')).toContain('available to administrators only');
    await m.goto('/ui/#/clients');
    await m.waitForSelector('#member-home');
    expect(await m.locator('#clients-h').count()).toBe(0);
    const status = await m.evaluate(async () => {
      const s = JSON.parse(sessionStorage.getItem('bi-controller.session') ?? '{}');
      const r = await fetch(`/v1/bi/admin/clients/${s.userId}`, { headers: { CTN: s.csrfToken } });
      return [r.status, (await r.json()).data];
    });
    // A member reads only the clients granted to them: none here.
    expect(status).toEqual([200, []]);
    await h.shot(m, '17-member');
  });

  it('made no request to another origin', () => {
    expect(h.foreignRequests).toEqual([]);
  });
});
