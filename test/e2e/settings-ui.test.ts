import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
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
  let context: BrowserContext;
  let pgUser: string;
  let connectionId: string;
  let exportPath: string;

  beforeAll(async () => {
    pgUser = await findPostgresUser();
    h = await startHarness();
    ({ page, context } = await h.newPage());
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

  /** Types a PostgreSQL data source (the test server) into the fields under `scope`. */
  const fillSource = async (p: Page, scope: string, schema: string, password: string) => {
    const values: [string, string][] = [['host', PG.host], ['port', String(PG.port)], ['database', PG.database], ['schema', schema], ['username', pgUser], ['password', password]];
    for (const [name, value] of values) await p.fill(`${scope} input[name=${name}]`.trim(), value);
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
    await fillSource(page, '', 'no_such_schema', 'typed-in-the-wizard');
    await page.click('#test-connection');
    await page.waitForSelector('#test-result[data-connected=false]');
    expect(await page.textContent('#test-result')).toContain('but schema no_such_schema does not exist');
    await page.fill('input[name=schema]', PG.schema);
    // By keyboard: Test Connection keeps focus while it connects and after the result is drawn.
    await page.focus('#test-connection');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#test-result[data-connected=true]');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('test-connection');
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
      ['connection-manifest', 'done', 'event'],
      ['connection', 'done', 'event'],
      ['manifest', 'done', 'event'],
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
    expect(await page.textContent('#client-manifests li[data-key="Client/GLOBEX"]')).toMatch(/Client\/GLOBEX.*Synced.*clients\/GLOBEX\.yaml/);
    expect(await page.textContent('#client-overview')).toContain('ACTIVE');
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
    expect(steps).toEqual([['manifest', 'done'], ['link', 'done'], ['model', 'done'], ['vdm', 'done'], ['dashboard', 'done'], ['register', 'done']]);
    await h.shot(page, '11-import-result');

    // Same objects as the original, under the new ID.
    const res = await page.evaluate(async () => {
      const s = JSON.parse(localStorage.getItem('bi-controller.session') ?? '{}');
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
    expect(states).toEqual([['manifest', 'done'], ['link', 'done'], ['model', 'done'], ['vdm', 'done'], ['dashboard', 'failed'], ['register', 'skipped']]);
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
    expect(await page.$eval('#key-list tr[data-state=active] td[data-label="Last used"]', (td) => td.textContent)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
    await page.click('#key-list [data-action=revoke]');
    await page.click('dialog.confirm [data-action=confirm]');
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
      const s = JSON.parse(localStorage.getItem('bi-controller.session') ?? '{}');
      const r = await fetch(`/v1/bi/admin/clients/${s.userId}`, { headers: { CTN: s.csrfToken } });
      return [r.status, (await r.json()).data];
    });
    // A member reads only the clients granted to them: none here.
    expect(status).toEqual([200, []]);
    await h.shot(m, '17-member');
  });

  // ---- Issue 16, second pass: each fault the administrator found has a step here. ----

  /** axe (WCAG 2.1 A/AA) at 1280 and 390 px, with screenshots: no violation. */
  const axe = async (p: Page, name: string) => expect(await h.check(p, name)).toEqual([]);
  /** The Connection manifests written for a client (spec.owner). */
  const ownedConnections = (clientId: string) =>
    readdirSync(join(h.manifests, 'connections'))
      .filter((f) => f.endsWith('.yaml'))
      .map((f) => parse(readFileSync(join(h.manifests, 'connections', f), 'utf8')))
      .filter((m) => m.spec.owner === clientId);
  /** An API call from the page with its session (`{userId}` in the path is filled in). */
  const api = (p: Page, method: string, path: string, body?: unknown) =>
    p.evaluate(async ([m, u, b]) => {
      const s = JSON.parse(localStorage.getItem('bi-controller.session') ?? '{}');
      const r = await fetch(String(u).replace('{userId}', s.userId), { method: String(m), headers: { CTN: s.csrfToken, 'content-type': 'application/json' }, body: b === undefined ? undefined : JSON.stringify(b) });
      return { status: r.status, body: await r.json().catch(() => null) };
    }, [method, path, body] as const);
  const focused = (p: Page) => p.evaluate(() => {
    const el = document.activeElement;
    return el ? { tag: el.tagName.toLowerCase(), id: el.id, name: el.getAttribute('name'), action: el.getAttribute('data-action'), text: el.textContent?.trim() ?? '', key: (el as HTMLElement).dataset?.key ?? '' } : null;
  });
  const states = (p: Page) => p.$$eval('ul.progress li', (lis) => lis.map((li) => li.dataset.state));
  const typeLogin = async (p: Page) => {
    await p.waitForSelector('form.login');
    await p.fill('input[name=username]', ADMIN.username);
    await p.fill('input[name=password]', ADMIN.password);
    await p.press('input[name=password]', 'Enter');
  };

  it('keeps the session in a second tab and on a deep link, and lands on the deep link after a login', async () => {
    // Fault: a second tab or a deep link asked to log in again and lost the link.
    const tab2 = await context.newPage();
    await tab2.goto('/ui/#/clients/GLOBEX');
    await tab2.waitForSelector('#client-facts');
    expect(await tab2.locator('form.login').count()).toBe(0);
    await tab2.close();
    const { page: fresh } = await h.newPage();
    await fresh.goto('/ui/#/clients?status=ACTIVE&search=glo');
    await typeLogin(fresh);
    await fresh.waitForSelector('#registry tr[data-client=GLOBEX]');
    expect(await fresh.evaluate(() => location.hash)).toMatch(/^#\/clients\?.*status=ACTIVE.*search=glo/);
    expect(await fresh.inputValue('input[name=search]')).toBe('glo');
    expect(await fresh.inputValue('select[name=status]')).toBe('ACTIVE');
  });

  it('gives this tab the token of a login in another tab, and never shows the raw "Invalid CSRF token"', async () => {
    await page.goto('/ui/#/keys');
    await page.waitForSelector('#key-list table');
    const tab2 = await context.newPage();
    await tab2.goto('/ui/#/clients');
    await tab2.waitForSelector('#clients-h');
    // Signing out in tab 2 signs this tab out; signing in again there brings this tab back where it was.
    await tab2.click('#logout');
    await page.waitForSelector('form.login');
    await typeLogin(tab2);
    await tab2.waitForSelector('#clients-h');
    await page.waitForSelector('#keys-h');
    await page.click('#nav >> text=Clients');
    await page.waitForSelector('#registry tr[data-client=GLOBEX]');
    expect(await page.textContent('body')).not.toContain('Invalid CSRF token');
    // A login this browser's tabs never heard of (the cookie changed, no tab has the token): the login page says why, then back to the page.
    await tab2.evaluate(async ([u, pw]) => {
      await fetch('/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: u, password: pw }) });
    }, [ADMIN.username, ADMIN.password]);
    await page.click('#nav >> text=API keys');
    await page.waitForSelector('form.login');
    expect(await page.textContent('main')).toContain('Your session changed in another window: sign in again.');
    expect(await page.textContent('body')).not.toContain('Invalid CSRF token');
    await typeLogin(page);
    await page.waitForSelector('#keys-h');
    await tab2.waitForSelector('#clients-h');
    // The same when the other tab is the one that finds out: it tells this tab why (the CI once saw
    // a plain login page here, when the other tab's request was refused first).
    await tab2.evaluate(async ([u, pw]) => {
      await fetch('/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: u, password: pw }) });
    }, [ADMIN.username, ADMIN.password]);
    await tab2.click('#nav >> text=API keys');
    await tab2.waitForSelector('form.login');
    await page.waitForSelector('form.login');
    for (const p of [page, tab2]) expect(await p.textContent('main')).toContain('Your session changed in another window: sign in again.');
    await typeLogin(page);
    await page.waitForSelector('#keys-h');
    await tab2.waitForSelector('#keys-h');
    await tab2.close();
  });

  it('shows a loading state at once, then an error with Retry; a proxy\'s HTML 502 reads as a sentence', async () => {
    await page.click('#nav >> text=Clients');
    await page.waitForSelector('#clients-h');
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    await page.route('**/v1/bi/admin/core-models/**', async (route) => {
      await gate;
      await route.fulfill({ status: 502, contentType: 'text/html', body: '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>' });
    });
    await page.click('#nav >> text=New client');
    await page.waitForSelector('#page-loading');
    // The previous page is gone while the new one loads.
    expect(await page.locator('#clients-h').count()).toBe(0);
    release();
    await page.waitForSelector('#page-error');
    const text = await page.textContent('#page-error');
    expect(text).toContain('The server answered 502 Bad Gateway');
    expect(text).not.toMatch(/<|nginx/);
    expect((await focused(page))?.id).toBe('page-error-h');
    await axe(page, '20-page-error');
    await page.unroute('**/v1/bi/admin/core-models/**');
    await page.click('#retry');
    await page.waitForSelector('#wizard-h');
    expect((await focused(page))?.id).toBe('wizard-h');
  });

  it('checks each wizard step at its fields before leaving it, clears an error once fixed, and ties Test Connection to its values', async () => {
    const connectionsBefore = readdirSync(join(h.manifests, 'connections')).length;
    await page.fill('input[name=clientId]', 'initech');
    await page.waitForSelector('#client-id-status[data-state=free]');
    await page.fill('input[name=clientName]', 'N'.repeat(201));
    await page.click('#next');
    // At its field (aria-invalid, aria-describedby → the message), with a summary that links to it.
    await page.waitForSelector('.error-summary');
    expect((await focused(page))?.tag).toBe('div');
    const nameId = await page.$eval('input[name=clientName]', (el) => el.id);
    expect(await page.getAttribute('input[name=clientName]', 'aria-invalid')).toBe('true');
    expect(await page.getAttribute('input[name=clientName]', 'aria-describedby')).toContain(`${nameId}-error`);
    expect(await page.textContent(`#${nameId}-error`)).toBe('Display name must be at most 200 characters (it has 201).');
    await axe(page, '21-wizard-step1-errors');
    await page.click('.error-summary a');
    expect((await focused(page))?.name).toBe('clientName');
    await page.fill('input[name=clientName]', 'Initech');
    expect(await page.getAttribute('input[name=clientName]', 'aria-invalid')).toBeNull();
    expect(await page.locator('.error-summary').count()).toBe(0);
    expect(await page.isVisible(`#${nameId}-error`)).toBe(false);
    await page.click('#next');

    await page.waitForSelector('h2:text("2. Data source")');
    await page.click('#next');
    await page.waitForSelector('.error-summary');
    for (const f of ['host', 'database', 'schema', 'username']) expect(await page.getAttribute(`input[name=${f}]`, 'aria-invalid'), f).toBe('true');
    expect(await page.getAttribute('#ack-no-test', 'aria-invalid')).toBe('true');
    await page.fill('input[name=host]', PG.host);
    expect(await page.getAttribute('input[name=host]', 'aria-invalid')).toBeNull();
    await fillSource(page, '', PG.schema, 'initech-password');
    await page.click('#test-connection');
    await page.waitForSelector('#test-result[data-connected=true]');
    expect(await page.locator('.error-summary').count()).toBe(0);
    expect(await page.isVisible('#ack-no-test')).toBe(false);
    // Any change of a tested value voids the test: it no longer says "schema public found".
    await page.fill('input[name=schema]', 'acme');
    await page.waitForSelector('#test-result[data-connected=stale]');
    expect(await page.textContent('#test-result')).toContain('The values changed after the last test');
    await page.click('#next');
    await page.waitForSelector('#ack-no-test[aria-invalid=true]');
    expect(await page.textContent('.error-summary')).toContain('Continue without a successful connection test');
    await page.check('#ack-no-test');
    expect(await page.locator('.error-summary').count()).toBe(0);
    await page.click('#next');

    // Step 3: only number columns are measures; an unchecked measure is never swapped silently.
    await page.waitForSelector('h2:text("3. Model and dashboard")');
    expect(await page.$$eval('select[name=measure] option', (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['revenue', 'quantity']);
    expect(await page.inputValue('select[name=measure]')).toBe('revenue');
    await page.selectOption('select[name=measure]', 'quantity');
    await page.uncheck('#column-quantity');
    expect(await page.inputValue('select[name=measure]')).toBe('');
    expect(await page.textContent('select[name=measure] option:checked')).toBe('(quantity is not selected)');
    await page.click('#next');
    await page.waitForSelector('select[name=measure][aria-invalid=true]');
    await axe(page, '38-wizard-3-errors');
    await page.check('#column-quantity');
    expect(await page.inputValue('select[name=measure]')).toBe('quantity');
    expect(await page.locator('.error-summary').count()).toBe(0);
    await page.selectOption('select[name=dimension]', 'quantity');
    await page.click('#next');
    await page.waitForSelector('select[name=dimension][aria-invalid=true]');
    expect(await page.textContent('.error-summary')).toContain('choose another column than the measure');
    await page.selectOption('select[name=dimension]', 'product');
    await page.click('#next');
    await page.waitForSelector('h2:text("4. Review and create")');
    const review = await page.textContent('#review');
    expect(review).toContain('not run for these values (continuing without a successful test)');
    expect(review).toContain('sum of quantity by product');
    await axe(page, '39-wizard-4-review');
    // Nothing was written while the steps were checked.
    expect(readdirSync(join(h.manifests, 'connections')).length).toBe(connectionsBefore);
  });

  it('fails Create visibly on a lost answer and on a 500, retries without a second connection, and draws steps before the answer', async () => {
    const isWrite = (url: URL) => url.pathname.startsWith('/v1/sdk/client/onboard/') && !url.search.includes('dryRun');
    // 1. The connection is written but its answer never arrives.
    await page.route('**/v1/bi/admin/connections/**', async (route) => {
      await route.fetch();
      await route.abort('connectionreset');
    }, { times: 1 });
    await page.click('#create');
    await page.waitForSelector('#result[data-outcome=FAILED]');
    expect(await page.textContent('#result')).toContain('could not be reached');
    expect(await states(page)).not.toContain('running');
    expect(await states(page)).toContain('failed');
    expect(await page.isEnabled('#create')).toBe(true);
    expect(await page.textContent('#create')).toBe('Try again');
    expect(ownedConnections('INITECH')).toHaveLength(1);
    // 2. The onboarding answers 500: shown at the step, no spinner left.
    await page.route(isWrite, (route) => route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ success: false, error: 'Internal server error' }) }), { times: 1 });
    await page.click('#create');
    await page.waitForSelector('#result[data-outcome=FAILED] >> text=Internal server error');
    expect(await states(page)).not.toContain('running');
    await h.shot(page, '24-create-500');
    expect(ownedConnections('INITECH')).toHaveLength(1);
    // 3. Success, followed live: the first step of the write is drawn before its HTTP answer
    // arrives (the page's own clocks: a DOM mutation vs the response's resource timing).
    await page.evaluate(() => {
      const w = window as unknown as { firstStepAt?: number };
      delete w.firstStepAt;
      const seen = () => document.querySelector('#progress li[data-group=Client][data-seen=event]');
      new MutationObserver((_m, obs) => {
        if (seen()) {
          w.firstStepAt = performance.now();
          obs.disconnect();
        }
      }).observe(document.body, { subtree: true, childList: true, attributes: true });
      performance.clearResourceTimings();
    });
    await page.click('#create');
    await page.waitForSelector('#result[data-outcome=COMPLETED]');
    const timing = await page.evaluate(() => {
      const write = performance.getEntriesByType('resource').filter((e) => e.name.includes('/v1/sdk/client/onboard/') && !e.name.includes('dryRun')) as PerformanceResourceTiming[];
      return { firstStepAt: (window as unknown as { firstStepAt?: number }).firstStepAt ?? Infinity, answerAt: write[write.length - 1]?.responseStart ?? -1 };
    });
    expect(timing.answerAt).toBeGreaterThan(0);
    expect(timing.firstStepAt).toBeLessThan(timing.answerAt);
    expect(await states(page)).toEqual(['done', 'done', 'done', 'done', 'done', 'done', 'done', 'done']);
    const owned = ownedConnections('INITECH');
    expect(owned).toHaveLength(1);
    expect(owned[0].spec).toMatchObject({ schema: 'acme', host: PG.host });
    expect(parse(readFileSync(join(h.manifests, 'clients', 'INITECH.yaml'), 'utf8')).spec.connectionId).toBe(owned[0].spec.connectionId);
    expect((await focused(page))?.id).toBe('result-h');
  });

  it('imports: an existing ID is a failure, a copy gets a data source of its own, a sum of a text column is refused', async () => {
    await page.click('#nav >> text=Import');
    await page.setInputFiles('input[name=package]', exportPath);
    await page.waitForSelector('#import-id-status[data-state=taken]');
    await page.click('#import');
    await page.waitForSelector('input[name=clientId][aria-invalid=true]');
    expect(await page.locator('#result').count()).toBe(0);
    await axe(page, '25-import-errors');
    // When the check cannot tell, the server's answer (ALREADY_EXISTS) is shown as a failure, not as ticked steps.
    await page.route('**/v1/bi/admin/clients/GLOBEX/*', (route) => route.fulfill({ status: 404, contentType: 'application/json', body: JSON.stringify({ success: false, error: 'Client GLOBEX not found' }) }));
    await page.fill('input[name=clientId]', 'GLOBEX');
    await page.waitForSelector('#import-id-status[data-state=free]');
    await page.click('#import');
    await page.waitForSelector('#result[data-outcome=ALREADY_EXISTS]');
    expect(await page.textContent('#result')).toContain('GLOBEX already exists');
    expect(await states(page)).not.toContain('done');
    await page.unroute('**/v1/bi/admin/clients/GLOBEX/*');

    // A copy with a new data source of its own (not the original's warehouse).
    await page.fill('input[name=clientId]', 'GLOBEX-APAC');
    await page.waitForSelector('#import-id-status[data-state=free]');
    await page.check('#source-new');
    await fillSource(page, '#new-source', 'apac', 'apac-password');
    await page.click('#import');
    await page.waitForSelector('#result[data-outcome=COMPLETED]');
    const owned = ownedConnections('GLOBEX-APAC');
    expect(owned).toHaveLength(1);
    expect(owned[0].spec).toMatchObject({ host: PG.host, schema: 'apac', username: pgUser, owner: 'GLOBEX-APAC' });
    expect(owned[0].spec.connectionId).not.toBe(connectionId);
    expect(parse(readFileSync(join(h.manifests, 'clients', 'GLOBEX-APAC.yaml'), 'utf8')).spec.connectionId).toBe(owned[0].spec.connectionId);
    await axe(page, '40-import-result');

    // "Total region" = SUM of a text column: refused by the server (the core model types its columns).
    const bad = JSON.parse(readFileSync(exportPath, 'utf8'));
    bad.dashboards[0].sections[0].charts[0] = { title: 'Total region', type: 'kpi', measures: [{ field: 'region', aggregation: 'sum' }], dimensions: [] };
    const badPath = join(ARTIFACTS, 'TEXTSUM.import.json');
    writeFileSync(badPath, JSON.stringify(bad));
    await page.setInputFiles('input[name=package]', badPath);
    await page.fill('input[name=clientId]', 'TEXTSUM');
    await page.fill('input[name=connectionId]', 'D2026A00099');
    await page.click('#import');
    await page.waitForSelector('#result[data-outcome=FAILED]');
    expect(await page.textContent('#result .notice')).toContain('sum of "region", a text column');
  });

  it('keeps long names inside the registry, sorts it, counts it, opens rows and keeps its filters', async () => {
    const long = 'Averyveryverylongunbrokenclientnamewithoutanyspaces'.repeat(4).slice(0, 200);
    const made = await api(page, 'POST', '/v1/sdk/client/onboard/{userId}', { clientId: 'LONGNAME', clientName: long, connectionId: 'D2026A00077', coreModelId: 'SM2026A00001', vdm: [{ name: 'v', selectedColumns: ['region'] }] });
    expect(made.status).toBe(201);
    await page.goto('/ui/#/clients?limit=25');
    await page.waitForSelector('#registry tr[data-client=LONGNAME]');
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 860 });
      const fit = await page.evaluate(() => {
        const row = document.querySelector('#registry tr[data-client=LONGNAME]');
        const right = Math.max(...[...(row?.querySelectorAll('td') ?? [])].filter((td) => td.offsetParent).map((td) => td.getBoundingClientRect().right));
        return { overflow: document.documentElement.scrollWidth - document.documentElement.clientWidth, right, width: window.innerWidth };
      });
      expect(fit.overflow, `${width}`).toBeLessThanOrEqual(0);
      expect(fit.right, `${width}`).toBeLessThanOrEqual(fit.width);
      // The page heading's buttons keep their distance from the panel below.
      const gap = await page.evaluate(() => {
        const head = document.querySelector('.page-head')!.getBoundingClientRect();
        const next = document.querySelector('form[role=search]')!.getBoundingClientRect();
        return next.top - head.bottom;
      });
      expect(gap, `${width}`).toBeGreaterThanOrEqual(12);
    }
    await page.setViewportSize({ width: 1280, height: 860 });
    // Counts by status, from the registry itself.
    const rows = await page.$$eval('#registry tbody tr', (trs) => trs.map((tr) => tr.querySelector('.badge')?.textContent));
    await page.waitForSelector('#status-counts [data-status=ACTIVE]');
    expect(await page.textContent('#status-counts [data-status=ACTIVE]')).toBe(`${rows.filter((r) => r === 'ACTIVE').length} active`);
    expect(await page.textContent('#status-counts [data-status=FAILED]')).toBe(`${rows.filter((r) => r === 'FAILED').length} failed`);
    // Sortable columns with aria-sort; focus stays on the header button.
    const ids = () => page.$$eval('#registry tbody tr', (trs) => trs.map((tr) => (tr as HTMLElement).dataset.client ?? ''));
    await page.click('th[data-sort=clientId] button');
    await page.waitForSelector('th[data-sort=clientId][aria-sort=ascending]');
    expect(await ids()).toEqual([...(await ids())].sort());
    expect((await focused(page))?.text).toBe('Client ID');
    expect(await page.getAttribute('th[data-sort=onboardedDate]', 'aria-sort')).toBe('none');
    await page.keyboard.press('Enter');
    await page.waitForSelector('th[data-sort=clientId][aria-sort=descending]');
    expect(await ids()).toEqual([...(await ids())].sort().reverse());
    expect(await page.evaluate(() => location.hash)).toContain('sort=clientId&order=desc');
    await axe(page, '26-registry');
    await page.emulateMedia({ colorScheme: 'dark' });
    await axe(page, '27-registry-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    // The whole row opens the client; coming back keeps the sort and filters.
    await page.click('#registry tr[data-client=GLOBEX] td.col-name');
    await page.waitForSelector('#client-facts');
    expect((await focused(page))?.tag).toBe('h1');
    expect(await page.$eval('#client-facts dd', (dd) => getComputedStyle(dd).wordBreak)).not.toBe('break-all');
    await page.click('#nav >> text=Clients');
    await page.waitForSelector('th[data-sort=clientId][aria-sort=descending]');
    expect(await page.evaluate(() => location.hash)).toContain('sort=clientId&order=desc');
  });

  it('asks before revoking with Cancel focused, closes on Escape, and keeps focus on what was acted on', async () => {
    await page.click('#nav >> text=API keys');
    await page.waitForSelector('#keys-h');
    await page.fill('input[name=label]', 'focus test');
    await page.click('button:text("Create key")');
    await page.waitForSelector('#key-list tr[data-state=active]');
    await page.click('#key-done');
    expect((await focused(page))?.id).toBe('keys-list-h');
    const keyId = await page.getAttribute('#key-list tr[data-state=active]', 'data-key');
    await page.click(`#key-list tr[data-key="${keyId}"] [data-action=revoke]`);
    await page.waitForSelector('dialog.confirm[open]');
    expect((await focused(page))?.action).toBe('cancel');
    await axe(page, '28-revoke-dialog');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog.confirm', { state: 'detached' });
    expect((await focused(page))?.action).toBe('revoke');
    // Enter twice: opens the dialog, then presses Cancel: nothing is revoked.
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog.confirm[open]');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog.confirm', { state: 'detached' });
    expect(await page.getAttribute(`#key-list tr[data-key="${keyId}"]`, 'data-state')).toBe('active');
    await page.click(`#key-list tr[data-key="${keyId}"] [data-action=revoke]`);
    await page.click('dialog.confirm [data-action=confirm]');
    await page.waitForSelector(`#key-list tr[data-key="${keyId}"][data-state=revoked]`);
    expect((await focused(page))?.key).toBe(keyId);
    // At 390 px the Revoke action of an active key is on screen.
    await page.fill('input[name=label]', 'narrow test');
    await page.click('button:text("Create key")');
    await page.waitForSelector('#key-list tr[data-state=active]');
    await page.setViewportSize({ width: 390, height: 844 });
    const box = await page.locator('#key-list tr[data-state=active] [data-action=revoke]').boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
    await page.setViewportSize({ width: 1280, height: 860 });
    await axe(page, '29-keys');
  });

  it('has a menu button at 390 px that shows the navigation and closes on Escape', async () => {
    const { page: m } = await h.newPage({ width: 390, height: 844 });
    await m.goto('/ui/#/clients');
    await typeLogin(m);
    await m.waitForSelector('#clients-h');
    expect((await focused(m))?.id).toBe('clients-h');
    expect(await m.isVisible('#nav')).toBe(false);
    expect(await m.getAttribute('#menu-toggle', 'aria-expanded')).toBe('false');
    await m.click('#menu-toggle');
    expect(await m.getAttribute('#menu-toggle', 'aria-expanded')).toBe('true');
    expect(await m.isVisible('#nav')).toBe(true);
    expect((await focused(m))?.tag).toBe('a');
    await h.shot(m, '30-mobile-nav-open');
    await m.keyboard.press('Escape');
    expect(await m.getAttribute('#menu-toggle', 'aria-expanded')).toBe('false');
    expect(await m.isVisible('#nav')).toBe(false);
    expect((await focused(m))?.id).toBe('menu-toggle');
    await m.click('#menu-toggle');
    await m.click('#nav >> text=API keys');
    await m.waitForSelector('#keys-h');
    expect(await m.isVisible('#nav')).toBe(false);
    expect((await focused(m))?.id).toBe('keys-h');
  });

  it('has no axe violation on the pages it owns, at 1280 and 390 px, light and dark', async () => {
    const { page: p } = await h.newPage();
    await p.goto('/ui/#/login');
    await p.evaluate(() => localStorage.removeItem('bi-controller.session'));
    await p.goto('/ui/#/login');
    await p.waitForSelector('form.login');
    await axe(p, '31-login');
    await typeLogin(p);
    await p.waitForSelector('#registry table');
    await p.goto('/ui/#/new');
    await p.waitForSelector('#wizard-h');
    await axe(p, '32-wizard-1');
    await p.emulateMedia({ colorScheme: 'dark' });
    await axe(p, '33-wizard-1-dark');
    await p.fill('input[name=clientId]', 'AXE');
    await p.waitForSelector('#client-id-status[data-state=free]');
    await p.fill('input[name=clientName]', 'Axe check');
    await p.click('#next');
    await p.waitForSelector('h2:text("2. Data source")');
    await p.click('#next');
    await p.waitForSelector('.error-summary');
    await axe(p, '34-wizard-2-errors-dark');
    await p.emulateMedia({ colorScheme: 'light' });
    await axe(p, '35-wizard-2-errors');
    // Leaving the wizard with what was typed asks first (the draft stays in this tab).
    await p.goto('/ui/#/import');
    await p.click('#leave-wizard [data-action=confirm]');
    await p.waitForSelector('#import-h');
    await axe(p, '36-import');
    await p.goto('/ui/#/keys');
    await p.waitForSelector('#key-list table');
    await axe(p, '37-keys');
  });

  it('made no request to another origin', () => {
    expect(h.foreignRequests).toEqual([]);
  });
});
