import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, ARTIFACTS, expectClean, MEMBER, pageApi, startHarness, type Harness } from './harness.ts';

/**
 * People and the defects of issue 29 end to end in headless Chromium against the real server: the
 * navigation at 1280 / 768 / 390 px, the users page (last login, password reset, delete, every
 * user's keys, a stale edit answered with a reload prompt), the member's dashboards and names, the
 * key form's truthful client field, the wizard's draft (address, reload, Back, leaving asks, a
 * session that ended), the client-ID check and its busy state, and an import refused before any
 * write. Every page is checked with axe at 1280 and 390 px (screenshots in test/artifacts/).
 */

const ACME_DB = 'D2026A00201';
const PAT = { username: 'pat', password: 'pat-password-1' };

describe('console: people, member views and the wizard in a real browser', () => {
  let h: Harness;
  let page: Page;
  let ctx: BrowserContext;

  const api = pageApi;
  const login = async (p: Page, who: { username: string; password: string }, landing = '#clients-h') => {
    await p.goto('/ui/#/login');
    await p.waitForSelector('form.login');
    await p.fill('input[name=username]', who.username);
    await p.fill('input[name=password]', who.password);
    await p.keyboard.press('Enter');
    if (landing) await p.waitForSelector(landing);
  };
  /** axe finds nothing at 1280 and 390 px, and at 390 px nothing is wider than the screen. */
  const clean = (p: Page, name: string) => expectClean(h, p, name);
  const userId = (username: string) => (h.server.runtime.auth.users.findByName(username) as { userId: string }).userId;

  beforeAll(async () => {
    h = await startHarness();
    ({ context: ctx, page } = await h.newPage());
    await login(page, ADMIN);
    const made = await api(page, 'POST', '/v1/sdk/client/onboard/{userId}', {
      clientId: 'ACME',
      clientName: 'Acme Retail',
      connectionId: ACME_DB,
      coreModelId: 'SM2026A00001',
      vdm: [{ name: 'Sales', selectedColumns: ['region', 'product', 'revenue'] }],
      dashboards: [{ name: 'Acme sales overview', sections: [{ name: 'Summary', charts: [{ title: 'Revenue', type: 'kpi', measures: ['revenue'], dimensions: [] }] }] }],
    });
    expect(made.status).toBe(201);
    const mia = userId(MEMBER.username);
    expect((await api(page, 'PATCH', `/v1/bi/admin/users/${mia}/{userId}`, { clients: ['ACME'] })).status).toBe(200);
    expect((await api(page, 'POST', '/v1/bi/admin/users/{userId}', { username: PAT.username, password: PAT.password, role: 'member', clients: ['ACME'] })).status).toBe(201);
  });
  afterAll(async () => {
    expect(h.foreignRequests).toEqual([]);
    await h.close();
  });

  it('the navigation: one row and every entry in view at 1280 px, one row with a Menu at 768, behind Menu at 390', async () => {
    await page.goto('/ui/#/clients');
    await page.waitForSelector('#clients-h');
    const layout = () =>
      page.evaluate(() => {
        const header = document.querySelector('header.topbar') as HTMLElement;
        const links = [...document.querySelectorAll('#nav a')] as HTMLElement[];
        const visible = links.filter((a) => {
          const r = a.getBoundingClientRect();
          return r.width > 0 && r.height > 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth;
        });
        return { header: header.getBoundingClientRect().height, links: links.length, visible: visible.length, menu: getComputedStyle(document.getElementById('menu-toggle') as HTMLElement).display };
      });
    // 1280: the bar is one row (brand and the signed-in user), every entry in view without a click.
    const wide = await layout();
    expect(wide.header).toBeLessThan(70);
    expect(wide.visible).toBe(wide.links);
    expect(wide.menu).toBe('none');
    expect(await page.getAttribute('#nav a[data-nav=clients]', 'aria-current')).toBe('page');
    await clean(page, 'people-01-nav');
    // 768: one row, the entries behind Menu, shown as groups side by side.
    await page.setViewportSize({ width: 768, height: 900 });
    const mid = await layout();
    expect(mid.header).toBeLessThan(70);
    expect(mid.menu).not.toBe('none');
    await page.click('#menu-toggle');
    expect(await page.getAttribute('#menu-toggle', 'aria-expanded')).toBe('true');
    const open = await layout();
    expect(open.visible).toBe(open.links);
    await h.shot(page, 'people-02-nav-768-open');
    await page.keyboard.press('Escape');
    expect(await page.isVisible('#nav')).toBe(false);
    // 390: behind Menu; a choice closes it and goes there.
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.isVisible('#nav a[data-nav=users]')).toBe(false);
    await page.click('#menu-toggle');
    await h.shot(page, 'people-03-nav-390-open');
    await page.click('#nav a[data-nav=users]');
    await page.waitForSelector('#user-table');
    expect(await page.isVisible('#nav')).toBe(false);
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('users: last login, the password hint the server keeps, a password reset that ends the sessions', async () => {
    const other = await h.newPage();
    await login(other.page, PAT, '#member-home');
    await page.goto('/ui/#/clients');
    await page.waitForSelector('#clients-h');
    await page.click('#nav >> text=Users');
    await page.waitForSelector('#user-table tr[data-user=pat]');
    // The last login is shown (pat signed in); mia never did.
    expect(await page.textContent('#user-table tr[data-user=pat] td:nth-child(5)')).toMatch(/^\d{4}-\d{2}-\d{2} /);
    expect(await page.textContent('#user-table tr[data-user=mia] td:nth-child(5)')).toBe('Never');
    // Granted clients by name.
    expect(await page.textContent('#user-table tr[data-user=pat] td:nth-child(3)')).toBe('Acme Retail (ACME)');
    // The hint says what the server accepts (8 characters), and a 9-character password is taken.
    expect(await page.textContent('#create-user')).toContain('At least 8 characters.');
    expect(await page.textContent('#create-user')).not.toContain('12 characters');
    await page.fill('#create-user input[name=username]', 'zed');
    await page.fill('#create-user input[name=password]', 'nine-char');
    await page.click('#create-user button[type=submit]');
    await page.waitForSelector('#create-user-result .notice.ok');
    // Reset pat's password: pat's browser is signed out, the new password works.
    await page.click('#user-table tr[data-user=pat] [data-action=reset-password]');
    await page.fill('#user-table tr[data-user=pat] input[name=new-password]', 'short');
    await page.click('#user-table tr[data-user=pat] [data-action=save-password]');
    expect(await page.textContent('#user-table tr[data-user=pat] .field-error')).toContain('At least 8 characters');
    await page.fill('#user-table tr[data-user=pat] input[name=new-password]', 'pat-new-password');
    await page.click('#user-table tr[data-user=pat] [data-action=save-password]');
    await page.waitForSelector('#user-table tr[data-user=pat] .editor-result .notice.ok');
    await clean(page, 'people-04-users-reset');
    await other.page.click('.tabs >> text=API keys');
    await other.page.waitForSelector('form.login');
    await login(other.page, { ...PAT, password: 'pat-new-password' }, '#keys-h');
    PAT.password = 'pat-new-password';
    await other.context.close();
  });

  it('every user\'s keys: an admin sees whose key is for which client and revokes one; deleting a user revokes theirs', async () => {
    const zed = userId('zed');
    const pat = userId('pat');
    h.server.runtime.auth.createKey({ userId: zed, label: 'zed laptop', createdBy: zed });
    const patKey = h.server.runtime.auth.createKey({ userId: pat, label: 'pat partner feed', clientId: 'ACME', createdBy: pat });
    await page.goto('/ui/#/clients');
    await page.waitForSelector('#clients-h');
    await page.goto('/ui/#/users');
    await page.waitForSelector(`#all-key-table tr[data-key=${patKey.keyId}]`);
    const row = `#all-key-table tr[data-key=${patKey.keyId}]`;
    expect(await page.textContent(`${row} td:nth-child(1)`)).toBe('pat');
    expect(await page.textContent(`${row} td:nth-child(3)`)).toBe('Acme Retail (ACME)');
    await page.click(`${row} [data-action=revoke]`);
    await page.click('dialog.confirm [data-action=confirm]');
    await page.waitForSelector('#all-keys-status .notice.ok');
    expect(h.server.runtime.auth.keys.get(patKey.keyId)?.revoked).toBe(true);
    // Delete zed: a typed confirmation; the key stops, the row goes.
    await page.click('#user-table tr[data-user=zed] [data-action=delete]');
    await page.waitForSelector('#delete-user');
    expect(await page.isEnabled('#delete-user-confirm')).toBe(false);
    await page.fill('#delete-user input[name=confirm]', 'zed');
    await page.click('#delete-user-confirm');
    await page.waitForSelector('#users-status .notice.ok');
    expect(await page.locator('#user-table tr[data-user=zed]').count()).toBe(0);
    expect(h.server.runtime.auth.users.get(zed)).toBeUndefined();
    // Yourself: the button is off and says why.
    expect(await page.isDisabled('#user-table tr[data-user=admin] [data-action=delete]')).toBe(true);
    await clean(page, 'people-05-users-keys');
  });

  it('two admins editing one user: the second save is refused and the page offers a reload that shows the other change', async () => {
    await page.goto('/ui/#/clients');
    await page.waitForSelector('#clients-h');
    await page.goto('/ui/#/users');
    await page.waitForSelector('#user-table tr[data-user=mia]');
    await page.click('#user-table tr[data-user=mia] [data-action=edit]');
    // Meanwhile another admin takes ACME away from mia.
    const mia = userId(MEMBER.username);
    h.server.runtime.auth.users.setClients(mia, [], 'another-admin');
    await page.check('#user-table tr[data-user=mia] input[name=clients][value=ACME]');
    await page.click('#user-table tr[data-user=mia] [data-action=save]');
    await page.waitForSelector('#user-table tr[data-user=mia] [data-conflict=true]');
    expect(await page.textContent('#user-table tr[data-user=mia] [data-conflict=true]')).toContain('someone else changed this user');
    // Nothing was overwritten.
    expect(h.server.runtime.auth.users.clientsOf(mia)).toEqual([]);
    await clean(page, 'people-06-users-conflict');
    await page.click('#user-table tr[data-user=mia] [data-action=reload-user]');
    await page.waitForSelector('#user-table tr[data-user=mia] .editor:not([hidden]) input[name=clients][value=ACME]');
    expect(await page.isChecked('#user-table tr[data-user=mia] input[name=clients][value=ACME]')).toBe(false);
    await page.check('#user-table tr[data-user=mia] input[name=clients][value=ACME]');
    await page.click('#user-table tr[data-user=mia] [data-action=save]');
    await page.waitForFunction(() => document.querySelector('#user-table tr[data-user=mia] td:nth-child(3)')?.textContent === 'Acme Retail (ACME)');
    expect(h.server.runtime.auth.users.clientsOf(mia)).toEqual(['ACME']);
  });

  it('an admin\'s key for a client that does not exist is refused at the client field', async () => {
    await page.goto('/ui/#/keys');
    await page.waitForSelector('#keys-h');
    expect(await page.textContent('label[for^=f-clientId]')).toBe('Client (optional)');
    await page.fill('input[name=label]', 'typo');
    await page.fill('input[name=clientId]', 'ACMEE');
    await page.click('form button[type=submit]');
    await page.waitForSelector('input[name=clientId][aria-invalid=true]');
    expect(await page.textContent('#new-key')).toContain('clientId must name a client in the registry (Client ACMEE not found)');
    expect(h.server.runtime.db.prepare("SELECT COUNT(*) AS n FROM api_keys WHERE label = 'typo'").get()).toEqual({ n: 0 });
    await clean(page, 'people-07-keys-admin');
  });

  it('a member opens their dashboards, sees names, and the key form says the client is required', async () => {
    const m = await h.newPage();
    await login(m.page, MEMBER, '#member-home');
    await m.page.click('.tabs >> text=Dashboards');
    await m.page.waitForSelector('#dashboards-table');
    expect(m.page.url()).toContain('#/dashboards');
    expect(await m.page.textContent('#dashboards-table tbody tr td:nth-child(2)')).toBe('Acme Retail');
    expect(await m.page.textContent('select[name=client]')).toContain('Acme Retail');
    await clean(m.page, 'people-08-member-dashboards');
    await m.page.click('#dashboards-table a.strong');
    await m.page.waitForSelector('#dashboard-h');
    expect(await m.page.textContent('#dashboard-h')).toBe('Acme sales overview');
    expect(await m.page.textContent('#dashboard-crumb')).toBe('Acme sales overview');
    expect(await m.page.textContent('.dashboard-page .link-badge')).toBe('Acme Retail');
    await clean(m.page, 'people-09-member-dashboard');
    await m.page.goto('/ui/#/clients/ACME');
    await m.page.waitForSelector('#member-client-dashboards a');
    expect(await m.page.textContent('#member-client-dashboards a')).toBe('Acme sales overview');
    expect(await m.page.textContent('#member-client-crumb')).toBe('Acme Retail');
    await clean(m.page, 'people-10-member-client');
    // Keys: the client is required and offered from the member's grants, by name.
    await m.page.click('.tabs >> text=API keys');
    await m.page.waitForSelector('#keys-h');
    const labelText = await m.page.textContent('label[for^=f-clientId]');
    expect(labelText).toBe('Client');
    expect(labelText).not.toContain('optional');
    expect(await m.page.getAttribute('select[name=clientId]', 'required')).not.toBeNull();
    await m.page.waitForFunction(() => document.querySelector('select[name=clientId] option[value=ACME]')?.textContent === 'Acme Retail (ACME)');
    await m.page.fill('input[name=label]', 'partner');
    await m.page.click('form button[type=submit]');
    await m.page.waitForSelector('select[name=clientId][aria-invalid=true]');
    expect(await m.page.textContent('.field-error:not([hidden])')).toBe('Client is required: choose one of your granted clients.');
    await clean(m.page, 'people-11-member-keys');
    await m.page.selectOption('select[name=clientId]', 'ACME');
    await m.page.click('form button[type=submit]');
    await m.page.waitForSelector('#api-key-value');
    await m.context.close();
  });

  it('the wizard: a taken ID shows while typing, the check is visibly busy, the step is in the address; reload and Back keep the draft', async () => {
    await page.goto('/ui/#/clients');
    await page.waitForSelector('#clients-h');
    // A slow network: the availability check says it is running (aria-busy and text) until it answers.
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    await page.route('**/v1/bi/admin/clients/ACME/**', async (route) => {
      await gate;
      await route.continue();
    });
    await page.click('#nav >> text=New client');
    await page.waitForSelector('#wizard-h');
    await page.fill('input[name=clientId]', 'acme');
    await page.waitForSelector('#client-id-status[data-state=checking][aria-busy=true]');
    expect(await page.textContent('#client-id-status')).toContain('Checking whether ACME is free');
    release();
    await page.waitForSelector('#client-id-status[data-state=taken]');
    expect(await page.textContent('#client-id-status')).toBe('ACME is taken by Acme Retail (ACTIVE): choose another client ID.');
    await page.unroute('**/v1/bi/admin/clients/ACME/**');
    await clean(page, 'people-12-wizard-taken');
    await page.fill('input[name=clientId]', 'initrode');
    await page.waitForSelector('#client-id-status[data-state=free]');
    await page.fill('input[name=clientName]', 'Initrode');
    await page.click('#next');
    await page.waitForSelector('h2:text("2. Data source")');
    expect(page.url()).toMatch(/#\/new\?step=2$/);
    await page.fill('input[name=host]', '127.0.0.1');
    await page.fill('input[name=database]', 'test');
    await page.fill('input[name=schema]', 'public');
    await page.fill('input[name=username]', 'initrode_reader');
    // Reload: the same step with what was typed (a reload with a draft asks first: accepted here).
    page.once('dialog', (d) => void d.accept());
    await page.reload();
    await page.waitForSelector('h2:text("2. Data source")');
    expect(await page.inputValue('input[name=host]')).toBe('127.0.0.1');
    expect(await page.inputValue('input[name=username]')).toBe('initrode_reader');
    expect(await page.isVisible('#draft-note')).toBe(true);
    // Back: step 1 with its values.
    await page.goBack();
    await page.waitForSelector('h2:text("1. Client details")');
    expect(await page.inputValue('input[name=clientId]')).toBe('INITRODE');
    expect(await page.inputValue('input[name=clientName]')).toBe('Initrode');
    await page.goForward();
    await page.waitForSelector('h2:text("2. Data source")');
    await page.check('#ack-no-test');
    // Step 3's Next asks the server (dry run): visibly busy while it runs.
    await page.click('#next');
    await page.waitForSelector('h2:text("3. Model and dashboard")');
    let releaseRun = () => {};
    const gateRun = new Promise<void>((r) => (releaseRun = r));
    await page.route((url) => url.search.includes('dryRun=true'), async (route) => {
      await gateRun;
      await route.continue();
    });
    await page.click('#next');
    await page.waitForSelector('form[aria-busy=true] #step-busy[data-busy=true]');
    expect(await page.textContent('#step-busy')).toContain('Checking the client with the server');
    expect(await page.isDisabled('#next')).toBe(true);
    releaseRun();
    await page.waitForSelector('h2:text("4. Review and create")');
    await page.unroute((url) => url.search.includes('dryRun=true'));
    expect(await page.textContent('#review')).toContain('INITRODE — Initrode');
    await clean(page, 'people-13-wizard-review');
  });

  it('the wizard: leaving asks; Stay keeps the page, Leave keeps the draft; a session that ended comes back to it', async () => {
    expect(page.url()).toMatch(/#\/new\?step=4$/);
    await page.click('#nav >> text=Clients');
    await page.waitForSelector('#leave-wizard');
    expect(page.url()).toMatch(/#\/new\?step=4$/);
    await clean(page, 'people-14-wizard-leave');
    await page.click('#leave-wizard [data-action=cancel]');
    expect(await page.isVisible('h2:text("4. Review and create")')).toBe(true);
    await page.click('#nav >> text=Clients');
    await page.click('#leave-wizard [data-action=confirm]');
    await page.waitForSelector('#clients-h');
    await page.click('#nav >> text=New client');
    await page.waitForSelector('h2:text("4. Review and create")');
    expect(await page.textContent('#review')).toContain('INITRODE — Initrode');
    // The session ends (every session deleted on the server): sign in again, back at the draft.
    h.server.runtime.db.prepare('DELETE FROM sessions').run();
    await page.click('#back');
    await page.waitForSelector('form.login');
    await page.fill('input[name=username]', ADMIN.username);
    await page.fill('input[name=password]', ADMIN.password);
    await page.keyboard.press('Enter');
    await page.waitForSelector('#wizard-h');
    await page.waitForSelector('h2:text("3. Model and dashboard"), h2:text("4. Review and create")');
    await page.goto('/ui/#/new?step=1');
    await page.waitForSelector('h2:text("1. Client details")');
    expect(await page.inputValue('input[name=clientId]')).toBe('INITRODE');
    // Start over discards it.
    await page.click('#discard-draft');
    await page.click('#discard-dialog-confirm');
    await page.waitForFunction(() => (document.querySelector('input[name=clientId]') as HTMLInputElement | null)?.value === '');
    await page.click('#nav >> text=Clients');
    expect(await page.evaluate(() => sessionStorage.getItem('bi-controller.wizard-draft'))).toBeNull();
    await page.waitForSelector('#clients-h');
    expect(await page.locator('#leave-wizard').count()).toBe(0);
  });

  it('an import the server refuses before writing anything (409) is drawn as a refusal, not as a failed step', async () => {
    const pkg = {
      clientId: 'COPYCO',
      clientName: 'Copy Co',
      connectionId: ACME_DB,
      coreModelId: 'SM2026A00001',
      vdm: [{ name: 'Sales', selectedColumns: ['region', 'revenue'] }],
    };
    const path = join(ARTIFACTS, 'COPYCO.import.json');
    writeFileSync(path, JSON.stringify(pkg));
    await page.goto('/ui/#/import');
    await page.waitForSelector('#import-h');
    await page.setInputFiles('input[name=package]', path);
    await page.waitForSelector('#import-id-status[data-state=free]');
    await page.click('#import');
    await page.waitForSelector('#result');
    expect(await page.getAttribute('#result', 'data-outcome')).toBe('REFUSED');
    expect(await page.textContent('#result h2')).toBe('Refused: nothing was written');
    expect(await page.textContent('#result .notice')).toContain(`Connection ${ACME_DB} belongs to another client`);
    const states = await page.$$eval('ul.progress li', (lis) => lis.map((li) => li.dataset.state));
    expect(states).not.toContain('failed');
    // No step ran: each is "refused" (the dashboard row, with no dashboard in the package, "skipped").
    expect(new Set(states)).toEqual(new Set(['refused', 'skipped']));
    expect(await page.textContent('ul.progress li[data-state=refused] .detail')).toContain('refused before any write');
    expect(h.server.runtime.db.prepare("SELECT COUNT(*) AS n FROM clients WHERE client_id = 'COPYCO'").get()).toEqual({ n: 0 });
    await clean(page, 'people-15-import-refused');
    void ctx;
  });
});
