import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { ADMIN, expectClean, findPostgresUser, PG, pageApi, startHarness, type Harness } from './harness.ts';

/**
 * The operations console end to end in headless Chromium against the real server and the local
 * PostgreSQL: pipelines (Run now, the live step table, rejected rows, log, the one-active-run
 * refusal, Cancel), connections (last test, used by, Test), users (create, grant,
 * disable/enable) and a member's read-only view. Every page is checked with axe at 1280 and 390 px.
 */

const ROWS = 200_000;
const SHOP_DB = 'D2026A00011';
const GLOBEX_DB = 'D2026A00012';
const MEMBER = { username: 'olive', password: 'olive-password-e2e' };

describe('operations console in a real browser', () => {
  let h: Harness;
  let page: Page;
  let pgUser: string;
  let pgClient: pg.Client;
  /**
   * Holds a run mid-way, deterministically: a second session keeps a transaction open that the
   * run's load must wait for (the same table name created but not committed; later, a lock on the
   * report that TRUNCATE waits for). The source has read a few batches by then, so the page shows
   * a running run with some rows read and not all, for as long as the test needs.
   */
  let holder: pg.Client;
  const hold = async (sql: string) => {
    await holder.query('BEGIN');
    await holder.query(sql);
  };
  const release = () => holder.query('ROLLBACK');
  const schema = `bi_ui_admin_${process.pid}_${Date.now()}`;
  let pipelineId = '';

  const manifest = (kind: string, name: string, spec: Record<string, unknown>) => stringify({ apiVersion: 'bi.controller/v1', kind, metadata: { name }, spec });
  const write = (rel: string, text: string) => {
    mkdirSync(join(h.manifests, rel, '..'), { recursive: true });
    writeFileSync(join(h.manifests, rel), text);
  };
  const client = (clientId: string, connectionId: string) =>
    manifest('Client', clientId, {
      clientId,
      clientName: `${clientId === 'ACME' ? 'ACME Retail' : 'Globex Corporation'}`,
      description: 'Created by the operations e2e suite',
      connectionId,
      coreModelId: 'SM2026A00001',
      vdm: [{ name: 'Sales', selectedColumns: ['region', 'product', 'order_date', 'revenue'] }],
    });

  /** Calls the API from the page with the signed-in session (the way the console does). */
  const api = pageApi;

  const login = async (p: Page, who: { username: string; password: string }) => {
    await p.goto('/ui/');
    await p.waitForSelector('form.login');
    await p.fill('input[name=username]', who.username);
    await p.fill('input[name=password]', who.password);
    await p.keyboard.press('Enter');
  };
  /** axe finds nothing at 1280 and 390 px, and at 390 px nothing is wider than the screen. */
  const clean = (p: Page, name: string) => expectClean(h, p, name);

  beforeAll(async () => {
    pgUser = await findPostgresUser();
    pgClient = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user: pgUser });
    await pgClient.connect();
    holder = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user: pgUser });
    await holder.connect();
    await pgClient.query(`CREATE SCHEMA "${schema}"`);
    await pgClient.query(`CREATE TABLE "${schema}".shop_orders (order_ref text, email text, amount text)`);
    // Every 10th email is invalid: the validate step rejects 10 % of the rows with a reason.
    await pgClient.query(
      `INSERT INTO "${schema}".shop_orders SELECT i::text, CASE WHEN i % 10 = 0 THEN 'not-an-email-' || i ELSE 'buyer' || i || '@shop.example' END, (i % 500)::text || '.25' FROM generate_series(1, ${ROWS}) i`,
    );
    h = await startHarness();
    const conn = (name: string, connectionId: string, label: string) =>
      manifest('Connection', name, { connectionId, name: label, vendor: 'POSTGRESQL', host: PG.host, port: PG.port, database: PG.database, schema, username: pgUser });
    write('connections/shop.yaml', conn('shop', SHOP_DB, 'Shop database (local PostgreSQL with a deliberately long name to show wrapping)'));
    write('connections/globex.yaml', conn('globex', GLOBEX_DB, 'Globex warehouse'));
    write('clients/ACME.yaml', client('ACME', SHOP_DB));
    write('clients/GLOBEX.yaml', client('GLOBEX', GLOBEX_DB));
    await h.server.runtime.syncNow();
    ({ page } = await h.newPage());
    await login(page, ADMIN);
    await page.waitForSelector('#clients-h');
    // The pipeline is imported through the API (session variant), as a person with a script would.
    const imported = await api(page, 'POST', '/v1/sdk/import-pipeline/{userId}', {
      name: 'Shop orders to the orders report',
      description: `${schema}.shop_orders → ${schema}.orders_report: amounts as decimals, invalid e-mail addresses rejected`,
      source: { connectionId: SHOP_DB, type: 'database', config: { schemaName: schema, tableName: 'shop_orders' } },
      destination: { connectionId: SHOP_DB, schemaName: schema },
      steps: [
        { type: 'transform', config: { fieldMappings: [{ source: 'order_ref', target: 'order_id' }], rules: [{ field: 'order_id', rule: 'to_integer' }, { field: 'amount', rule: 'to_decimal' }] } },
        { type: 'validate', config: { rules: [{ field: 'email', rule: 'email' }] } },
        { type: 'load', config: { tableName: 'orders_report', mode: 'replace' } },
      ],
      schedule: { isEnabled: true, frequency: 'daily', startDate: '2026-01-01', startTime: '02:00' },
    });
    expect(imported.status, JSON.stringify(imported.body)).toBe(201);
    pipelineId = (imported.body.data as { pipelineId: string }).pipelineId;
  }, 120_000);

  afterAll(async () => {
    await h?.close();
    await pgClient?.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => {});
    await pgClient?.end().catch(() => {});
    await holder?.end().catch(() => {});
  });

  it('lists pipelines with client, schedule, enabled and last/next run', async () => {
    await page.click('#nav >> text=Pipelines');
    await page.waitForSelector(`#pipeline-table tr[data-pipeline="${pipelineId}"]`);
    const row = page.locator(`tr[data-pipeline="${pipelineId}"]`);
    const text = (await row.textContent()) ?? '';
    expect(text).toContain('Shop orders to the orders report');
    expect(text).toContain('ACME');
    expect(text).toContain('Daily at 02:00');
    expect(text).toContain('Enabled');
    expect(text).toContain('Never run');
    await clean(page, 'admin-01-pipelines');
  });

  it('pipeline page: steps, source, destination, schedule; Run now; a second Run now while active is refused with a message', async () => {
    // A second tab opened before the run starts: its Run now button is still enabled.
    const { page: stale } = await h.newPage();
    await login(stale, ADMIN);
    await stale.waitForSelector('#clients-h');
    await stale.goto(`/ui/#/pipelines/${pipelineId}`);
    await stale.waitForSelector('#run-now:not([disabled])');

    await page.click(`a[href="#/pipelines/${pipelineId}"]`);
    await page.waitForSelector('#step-definitions');
    expect(await page.textContent('#pipeline-h')).toBe('Shop orders to the orders report');
    const steps = await page.locator('#step-definitions tbody tr').allTextContents();
    expect(steps.map((s) => s.replace(/\s+/g, ' '))).toEqual([
      expect.stringContaining('source'),
      expect.stringMatching(/transform.*fieldMappings: order_id|transform.*order_ref → order_id/),
      expect.stringContaining('rules: email: email'),
      expect.stringContaining('tableName: orders_report'),
    ]);
    expect(await page.textContent('#pipeline')).toContain(`${schema}.shop_orders`);
    await page.waitForSelector('#runs >> text=No runs yet');
    await clean(page, 'admin-02-pipeline');

    // The run's load will create orders_report: a table of that name created and not committed makes it wait.
    await hold(`CREATE TABLE "${schema}".orders_report (held int)`);
    await page.click('#run-now');
    await page.waitForSelector('#watch-run');
    await page.waitForSelector('#run-now[disabled]');
    expect(await page.textContent('#run-now-reason')).toMatch(/A run is already (queued|running) \(RUN-\d+\): one run at a time per pipeline\./);

    await stale.click('#run-now');
    await stale.waitForSelector('#run-now-status .notice.warn');
    expect(await stale.textContent('#run-now-status')).toMatch(new RegExp(`Not started\\. Pipeline ${pipelineId} already has an active run \\(RUN-\\d+\\)`));
    await stale.waitForSelector('#run-now[disabled]');
    await stale.close();
  });

  it('run page: the step table updates live while the run runs; then rejected rows and the log', async () => {
    await page.click('#watch-run');
    await page.waitForSelector('#run-step-table');
    // An intermediate state: the run is running and the source has read some rows, not all.
    const sourceOut = async () => Number(((await page.locator('#run-step-table tbody tr').first().locator('td').nth(4).textContent()) ?? '0').replace(/,/g, ''));
    await page.waitForFunction(
      (rows) => {
        const badge = document.querySelector('#run-head .badge');
        const cell = document.querySelector('#run-step-table tbody tr td:nth-child(5)');
        const n = Number((cell?.textContent ?? '0').replace(/,/g, ''));
        return badge?.getAttribute('data-status') === 'running' && n > 0 && n < rows;
      },
      ROWS,
      { timeout: 60_000, polling: 50 },
    );
    const seen = [await sourceOut()];
    expect(await page.textContent('#live-note')).toContain('Live');
    await h.shot(page, 'admin-03-run-live');
    await release();
    await page.waitForSelector('#run-head .badge[data-status="succeeded"]', { timeout: 120_000 });
    seen.push(await sourceOut());
    expect(seen[0]).toBeGreaterThan(0);
    expect(seen[1]).toBe(ROWS);
    expect(seen[0]).toBeLessThan(seen[1]);
    expect(await page.textContent('[data-stat="read"] .stat-value')).toBe('200,000');
    expect(await page.textContent('[data-stat="rejected"] .stat-value')).toBe('20,000');
    expect(await page.textContent('[data-stat="written"] .stat-value')).toBe('180,000');
    const statuses = await page.locator('#run-step-table tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-status')));
    expect(statuses).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);

    await page.waitForSelector('#reject-table');
    expect(await page.textContent('#rejects-info')).toBe('Rows 1–10 of 1,000 kept (20,000 rejected; the first 1,000 are kept)');
    const firstReject = (await page.locator('#reject-table tbody tr').first().textContent()) ?? '';
    expect(firstReject).toContain('not-an-email-10');
    expect(firstReject).toContain('is not an email address');
    await page.click('#rejects >> button:text("Next")');
    await page.waitForSelector('#rejects-info:text("Rows 11–20")');
    expect(await page.locator('#reject-table tbody tr').first().textContent()).toContain('not-an-email-110');
    expect(await page.locator('ol.log li').count()).toBeGreaterThan(0);
    await clean(page, 'admin-04-run-finished');
    const loaded = await pgClient.query(`SELECT count(*)::int AS n FROM "${schema}".orders_report`);
    expect(loaded.rows[0].n).toBe(180_000);
  });

  it('Cancel: a confirmation with Keep running focused, Escape closes it; confirmed, the run ends cancelled', async () => {
    // The run stays running while its load waits for the report (TRUNCATE waits for this lock).
    await hold(`LOCK TABLE "${schema}".orders_report IN ACCESS SHARE MODE`);
    await page.goto(`/ui/#/pipelines/${pipelineId}`);
    await page.waitForSelector('#run-now:not([disabled])');
    await page.click('#run-now');
    await page.click('#watch-run');
    await page.waitForSelector('#cancel-run');
    await page.click('#cancel-run');
    await page.waitForSelector('dialog.confirm[open]');
    // The safe choice has focus (Enter twice must not cancel the run).
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Keep running');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog.confirm', { state: 'detached' });
    expect(await page.isVisible('#cancel-run')).toBe(true);
    await page.click('#cancel-run');
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForSelector('text=Cancel requested for');
    await release();
    await page.waitForSelector('#run-head .badge[data-status="cancelled"]', { timeout: 60_000 });
    expect(await page.textContent('#run-error')).toContain('Cancelled');
    await clean(page, 'admin-05-run-cancelled');
    // A cancelled run loads nothing: the report still holds the first run's rows.
    const loaded = await pgClient.query(`SELECT count(*)::int AS n FROM "${schema}".orders_report`);
    expect(loaded.rows[0].n).toBe(180_000);
    await page.goto(`/ui/#/pipelines/${pipelineId}`);
    await page.waitForSelector('#run-history');
    const history = await page.locator('#run-history tbody tr .badge').allTextContents();
    expect(history).toEqual(['cancelled', 'succeeded']);
  });

  it('connections: host/db, owner, used by, last test; Test records a new last test', async () => {
    await page.click('#nav >> text=Connections');
    await page.waitForSelector(`#connection-table tr[data-connection="${SHOP_DB}"]`);
    const row = page.locator(`tr[data-connection="${SHOP_DB}"]`);
    const before = (await row.textContent()) ?? '';
    expect(before).toContain(`${PG.host}:${PG.port}`);
    expect(before).toContain(`${PG.database}.${schema}`);
    expect(before).toContain('ACME');
    expect(before).toContain('Shop orders to the orders report');
    expect(before).toContain('Never tested');
    await row.locator('[data-action="test"]').click();
    await page.waitForSelector(`tr[data-connection="${SHOP_DB}"] .badge[data-status="ok"]`);
    expect(await row.textContent()).toMatch(/Connected to PostgreSQL .* at 127\.0\.0\.1:5432\/test/);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('data-action'))).toBe('test');
    await clean(page, 'admin-06-connections');
  });

  it('users: create a member, grant a client, disable and enable (with confirmation); an admin cannot disable themself', async () => {
    await page.click('#nav >> text=Users');
    await page.waitForSelector('#user-table');
    const self = page.locator('tr[data-user="admin"]');
    expect(await self.locator('[data-action="disable"]').isDisabled()).toBe(true);
    expect(await self.textContent()).toContain('You cannot disable your own account');
    await page.fill('input[name=username]', MEMBER.username);
    await page.fill('input[name=password]', MEMBER.password);
    await page.selectOption('#create-user select[name=role]', 'member');
    await page.click('#create-user button[type=submit]');
    await page.waitForSelector(`tr[data-user="${MEMBER.username}"]`);
    expect(await page.textContent('#create-user-result')).toContain(`User ${MEMBER.username} created`);
    const row = () => page.locator(`tr[data-user="${MEMBER.username}"]`);
    expect(await row().textContent()).toContain('None');

    await row().locator('[data-action="edit"]').click();
    await row().locator('input[value="ACME"]').check();
    await row().locator('[data-action="save"]').click();
    await page.waitForFunction((u) => document.querySelector(`tr[data-user="${u}"]`)?.textContent?.includes('ACME'), MEMBER.username);

    await row().locator('[data-action="disable"]').click();
    await page.waitForSelector('dialog.confirm[open]');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Cancel');
    await clean(page, 'admin-07-disable-dialog');
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForSelector(`tr[data-user="${MEMBER.username}"][data-state="disabled"]`);
    await clean(page, 'admin-08-users');
    await row().locator('[data-action="enable"]').click();
    await page.click('dialog.confirm [data-action="confirm"]');
    await page.waitForSelector(`tr[data-user="${MEMBER.username}"][data-state="active"]`);
  });

  it("a member sees only the granted client, read-only, with no action buttons", async () => {
    const { page: m } = await h.newPage();
    await login(m, MEMBER);
    await m.waitForSelector('#member-client-table');
    const rows = await m.locator('#member-client-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-client')));
    expect(rows).toEqual(['ACME']);
    expect(await m.locator('main button').count()).toBe(0);
    await clean(m, 'admin-09-member-home');
    await m.click('#member-client-table a[href="#/clients/ACME"]');
    await m.waitForSelector('#member-client-facts');
    expect(await m.textContent('#member-client-h')).toBe('ACME Retail');
    expect(await m.textContent('#member-pipeline-table')).toContain('Shop orders to the orders report');
    expect(await m.locator('main button').count()).toBe(0);
    await clean(m, 'admin-10-member-client');
    await m.click('nav.tabs >> text=API keys');
    await m.waitForSelector('#keys-h');
    await clean(m, 'admin-10-member-keys');
    // Another tenant's client and the admin pages are not there for a member.
    await m.goto('/ui/#/clients/GLOBEX');
    await m.waitForSelector('#member-client .notice.bad');
    expect(await m.textContent('#member-client')).toContain('Client GLOBEX not found');
    await m.goto('/ui/#/pipelines');
    await m.waitForSelector('#member-home');
    await m.close();
  });

  it('pages load with an error and Retry when the server fails, and made no request to another origin', async () => {
    const { page: p } = await h.newPage();
    await login(p, ADMIN);
    await p.waitForSelector('#clients-h');
    let fail = true;
    await p.route('**/v1/bi/admin/connections/*', (route) => (fail ? route.fulfill({ status: 503, contentType: 'application/json', body: '{"success":false,"error":"Store unavailable"}' }) : route.continue()));
    await p.goto('/ui/#/connections');
    await p.waitForSelector('#connections .notice.bad');
    expect(await p.textContent('#connections')).toContain('Could not load connections. Store unavailable');
    await clean(p, 'admin-11-load-error');
    fail = false;
    await p.click('#connections [data-action="retry"]');
    await p.waitForSelector('#connection-table');
    await p.close();
    expect(h.foreignRequests).toEqual([]);
  });
});
