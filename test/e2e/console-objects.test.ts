import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ADMIN, expectClean, findPostgresUser, pageApi, PG, startHarness, type Harness, signIn } from './harness.ts';

/**
 * Objects in the console, end to end in headless Chromium against the real server and the local
 * PostgreSQL: an object's manifest, its desired-vs-applied diff, history and rollback; connections
 * edited and deleted (a delete refused while in use names the users; a long name does not widen
 * the table); pipelines run from the list, their schedule changed, paused and resumed; a run's
 * rejected rows and log filtered and downloaded; a failed run retried; and keyboard focus that
 * stays on Cancel, the rejects pager and Test while the page refreshes. axe at 1280 and 390 px.
 */

const ROWS = 30_000;
const SHOP_DB = 'D2026A00031';
const SPARE_DB = 'D2026A00032';
const LONG_NAME = `Warehouse_${'with_a_name_that_has_no_spaces_'.repeat(8)}end`;

describe('console: objects, connections and pipelines in a real browser', () => {
  let h: Harness;
  let page: Page;
  let pgUser: string;
  let pgClient: pg.Client;
  let holder: pg.Client;
  const schema = `bi_ui_objects_${process.pid}_${Date.now()}`;
  let pipelineId = '';
  const PIPELINE_NAME = 'Shop orders to the report';

  const manifest = (kind: string, name: string, spec: Record<string, unknown>) => stringify({ apiVersion: 'bi.controller/v1', kind, metadata: { name }, spec });
  const write = (rel: string, text: string) => {
    mkdirSync(join(h.manifests, rel, '..'), { recursive: true });
    writeFileSync(join(h.manifests, rel), text);
  };
  const pgConnection = (connectionId: string, name: string, extra: Record<string, unknown> = {}) => ({
    connectionId,
    name,
    vendor: 'POSTGRESQL',
    host: PG.host,
    port: PG.port,
    database: PG.database,
    schema,
    username: pgUser,
    ...extra,
  });

  const api = pageApi;
  const clean = (p: Page, name: string) => expectClean(h, p, name);
  /** Marks the focused element, so "still focused" means the same element, not a new one in its place. */
  const markFocused = (p: Page) => p.evaluate(() => ((document.activeElement as HTMLElement).dataset.e2eMark = 'focused'));
  const focusedIsMarked = (p: Page) => p.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.e2eMark === 'focused');
  const runRefreshes = (p: Page, runId: string, n: number) =>
    (async () => {
      for (let i = 0; i < n; i++) await p.waitForResponse((r) => r.url().includes(`/v1/sdk/pipeline-runs/${runId}/`) && !r.url().includes('/rejects') && !r.url().includes('/logs') && r.request().method() === 'GET', { timeout: 20_000 });
    })();

  beforeAll(async () => {
    pgUser = await findPostgresUser();
    pgClient = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user: pgUser });
    await pgClient.connect();
    holder = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user: pgUser });
    await holder.connect();
    await pgClient.query(`CREATE SCHEMA "${schema}"`);
    await pgClient.query(`CREATE TABLE "${schema}".shop_orders (order_ref text, email text, amount text)`);
    await pgClient.query(
      `INSERT INTO "${schema}".shop_orders SELECT i::text, CASE WHEN i % 10 = 0 THEN 'not-an-email-' || i ELSE 'buyer' || i || '@shop.example' END, (i % 500)::text || '.25' FROM generate_series(1, ${ROWS}) i`,
    );
    h = await startHarness();
    write('connections/shop.yaml', manifest('Connection', 'shop', pgConnection(SHOP_DB, LONG_NAME)));
    write('connections/spare.yaml', manifest('Connection', 'spare', pgConnection(SPARE_DB, 'Spare warehouse', { owner: 'ACME' })));
    write('clients/ACME.yaml', manifest('Client', 'ACME', {
      clientId: 'ACME',
      clientName: 'ACME Retail',
      connectionId: SHOP_DB,
      coreModelId: 'SM2026A00001',
      vdm: [{ name: 'Sales', selectedColumns: ['region', 'product', 'order_date', 'revenue'] }],
    }));
    await h.server.runtime.syncNow();
    ({ page } = await h.newPage());
    await signIn(page, ADMIN);
    const imported = await api(page, 'POST', '/v1/sdk/import-pipeline/{userId}', {
      name: PIPELINE_NAME,
      source: { connectionId: SHOP_DB, type: 'database', config: { schemaName: schema, tableName: 'shop_orders' } },
      destination: { connectionId: SHOP_DB, schemaName: schema },
      steps: [
        { type: 'validate', name: 'Check e-mails', config: { rules: [{ field: 'email', rule: 'email' }] } },
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

  it('an object: desired vs applied with the field diff, applied versions and a rollback through the write path', async () => {
    // A second version that applies, then a third that does not (a connection's owner cannot change).
    write('connections/spare.yaml', manifest('Connection', 'spare', pgConnection(SPARE_DB, 'Spare warehouse v2', { owner: 'ACME' })));
    await h.server.runtime.syncNow();
    write('connections/spare.yaml', manifest('Connection', 'spare', pgConnection(SPARE_DB, 'Spare warehouse v3', { owner: 'GLOBEX' })));
    await h.server.runtime.syncNow();
    await page.goto('/ui/#/manifests?kind=Connection');
    await page.waitForSelector('#manifests-table');
    await page.click('a[aria-label="Manifest, diff and history of Connection/spare"]');
    await page.waitForSelector('#object-diff');
    expect(await page.textContent('#object-h')).toBe('Connection/spare');
    expect(await page.textContent('#object-state')).toMatch(/2 fields differ\. The source's version does not apply \(.*owner cannot change\)/);
    const diff = await page.locator('#object-diff tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-path')));
    expect(diff.sort()).toEqual(['spec.name', 'spec.owner']);
    expect(await page.textContent('#object-diff tr[data-path="spec.owner"]')).toContain('"GLOBEX"');
    expect(await page.textContent('#applied-manifest')).toContain('Spare warehouse v2');
    expect(await page.textContent('#desired-manifest')).toContain('Spare warehouse v3');
    expect(await page.locator('#object-versions tbody tr').count()).toBe(2);
    expect(await page.textContent('#object-history')).toContain('older history needs git mode');
    expect(await page.locator('#object-audit li[data-action="apply"]').count()).toBeGreaterThanOrEqual(2);
    await clean(page, 'objects-01-diff');

    await page.click('button[aria-label="Roll back to version 1"]');
    await page.waitForSelector('#rollback-dialog[open]');
    await clean(page, 'objects-02-rollback-dialog');
    await page.click('#rollback-dialog-confirm');
    await page.waitForSelector('#object-flash .notice.ok');
    expect(await page.textContent('#object-flash')).toBe('Connection/spare rolled back to version 1: Synced.');
    await page.waitForSelector('#object-state .notice.ok');
    expect(await page.textContent('#object-state')).toContain('In sync');
    const file = parse(readFileSync(join(h.manifests, 'connections', 'spare.yaml'), 'utf8')) as { spec: { name: string; owner: string } };
    expect(file.spec).toMatchObject({ name: 'Spare warehouse', owner: 'ACME' });
    expect(await page.locator('#object-audit li[data-action="rollback"]').count()).toBe(1);
    await clean(page, 'objects-03-rolled-back');
  });

  it('connections: a long name wraps; Test keeps focus; edit never shows the password and keeps it when blank', async () => {
    const created = await api(page, 'POST', '/v1/bi/admin/connections/{userId}', { name: 'Edit me', vendor: 'POSTGRESQL', host: PG.host, port: PG.port, database: PG.database, schema, username: pgUser, password: 'typed-once' });
    expect(created.status).toBe(201);
    const editId = created.body.connectionId as string;
    await page.goto('/ui/#/connections');
    await page.waitForSelector(`#connection-table tr[data-connection="${editId}"]`);
    // The 200-character name without spaces wraps inside its cell (it once widened the table to 2,707 px).
    const widths = await page.evaluate(() => ({ table: document.getElementById('connection-table')?.getBoundingClientRect().width ?? 0, page: document.documentElement.scrollWidth, view: window.innerWidth }));
    expect(widths.page).toBeLessThanOrEqual(widths.view);
    expect(widths.table).toBeLessThanOrEqual(widths.view);
    expect(await page.getAttribute(`tr[data-connection="${SHOP_DB}"] a.conn-name`, 'title')).toBe(LONG_NAME);

    // Test by keyboard: the same button keeps focus while it tests and after the result is drawn.
    const test = page.locator(`tr[data-connection="${editId}"] [data-action="test"]`);
    await test.focus();
    await markFocused(page);
    await page.keyboard.press('Enter');
    await page.waitForSelector(`tr[data-connection="${editId}"] .badge[data-status="ok"]`, { timeout: 30_000 });
    expect(await focusedIsMarked(page)).toBe(true);
    await clean(page, 'objects-04-connections');

    await page.click(`tr[data-connection="${editId}"] [data-action="edit"]`);
    await page.waitForSelector('#connection-form');
    expect(await page.inputValue('#conn-password')).toBe('');
    expect(await page.inputValue('#conn-name')).toBe('Edit me');
    expect(await page.textContent('#connection-form')).toContain('Leave this blank to keep it');
    await clean(page, 'objects-05-connection-edit');
    await page.fill('#conn-name', 'Edited connection');
    await page.click('#save-connection');
    await page.waitForSelector('#connection-flash .notice.ok');
    expect(await page.textContent('#connection-flash')).toBe('Connection Edited connection saved.');
    const list = await api(page, 'GET', '/v1/bi/admin/connections/{userId}');
    const edited = (list.body.connections as { connectionId: string; name: string; credential: string }[]).find((c) => c.connectionId === editId);
    expect(edited).toMatchObject({ name: 'Edited connection', credential: 'secret' });
    expect(h.server.runtime.secrets.reveal(created.body.secretRef as string)).toBe('typed-once');
    // Another host without the password: refused at the password field (a stored secret goes only to its own target).
    await page.fill('#conn-host', '127.0.0.2');
    await page.click('#save-connection');
    await page.waitForSelector('#connection-problems .error-summary');
    expect(await page.getAttribute('#conn-password', 'aria-invalid')).toBe('true');
    await clean(page, 'objects-06-connection-refused');

    // Delete: refused while in use, the users listed; an unused one goes.
    await page.goto('/ui/#/connections');
    await page.click(`tr[data-connection="${SHOP_DB}"] [data-action="delete"]`);
    await page.click('#delete-connection-dialog-confirm');
    await page.waitForSelector('#delete-refused');
    const refusal = (await page.textContent('#delete-refused')) ?? '';
    expect(refusal).toContain('Not deleted');
    expect(refusal).toContain('Client ACME');
    expect(refusal).toContain(`Pipeline ${PIPELINE_NAME}`);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('delete-refused');
    await clean(page, 'objects-07-delete-refused');
    await page.click(`tr[data-connection="${editId}"] [data-action="delete"]`);
    await page.click('#delete-connection-dialog-confirm');
    await page.waitForSelector(`tr[data-connection="${editId}"]`, { state: 'detached' });
    expect(await page.textContent('#connections-flash')).toBe('Connection Edited connection deleted.');
  });

  it('pipelines: a too frequent cron is refused at its field; schedule saved, paused and resumed; run from the list', async () => {
    await page.goto(`/ui/#/pipelines/${pipelineId}`);
    await page.waitForSelector('#schedule-form');
    await page.selectOption('#schedule-frequency', 'cron');
    await page.fill('#schedule-cron', '*/5 * * * * *');
    await page.click('#save-schedule');
    await page.waitForSelector('#schedule-status .error-summary');
    expect(await page.textContent('#schedule-status')).toMatch(/schedule\.cronExpression fires every 5s, more often than once per 1m \(BI_SCHEDULE_MIN_INTERVAL\)/);
    expect(await page.getAttribute('#schedule-cron', 'aria-invalid')).toBe('true');
    await clean(page, 'objects-08-schedule-refused');
    await page.fill('#schedule-cron', '0 6 * * *');
    await page.click('#save-schedule');
    await page.waitForSelector('#schedule-status .notice.ok');
    expect(await page.textContent('#pipeline')).toContain('Cron 0 6 * * *');
    await page.click('#pause-schedule');
    await page.waitForSelector('#pause-schedule:text("Resume schedule")');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('pause-schedule');
    expect(await page.textContent('#schedule-status')).toContain('Schedule paused');
    expect(await page.textContent('#pipeline')).toContain('Disabled');
    await clean(page, 'objects-09-schedule-paused');
    await page.click('#pause-schedule');
    await page.waitForSelector('#pause-schedule:text("Pause schedule")');
    expect(await page.textContent('#pipeline')).toContain('Enabled');

    await page.goto('/ui/#/pipelines');
    await page.waitForSelector(`#run-${pipelineId}`);
    await clean(page, 'objects-10-pipelines');
    await page.click(`#run-${pipelineId}`);
    await page.waitForSelector('#watch-list-run');
    await page.click('#watch-list-run');
    await page.waitForSelector('#run-head .badge[data-status="succeeded"]', { timeout: 120_000 });
  });

  it('a run’s rejected rows and log: filtered by step and reason, downloaded as CSV and NDJSON (every kept row)', async () => {
    await page.waitForSelector('#reject-table');
    await page.selectOption('#rejects-step', { label: 'Check e-mails' });
    await page.fill('#rejects-reason', 'not an email');
    await page.waitForSelector('#rejects-info:text("matching")');
    expect(await page.textContent('#rejects-info')).toBe('Rows 1–10 matching');
    await page.fill('#rejects-reason', 'no such reason');
    await page.waitForSelector('#rejects >> text=No rejected row matches');
    await page.fill('#rejects-reason', '');
    await page.selectOption('#rejects-step', '');
    await page.waitForSelector('#rejects-info:text("of 1,000 kept")');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#rejects-csv')]);
    const text = readFileSync(await csv.path(), 'utf8');
    const lines = text.split('\r\n').filter(Boolean);
    expect(lines[0].startsWith('step,reasons,')).toBe(true);
    expect(lines).toHaveLength(1001);
    await page.selectOption('#logs-level', 'info');
    const [nd] = await Promise.all([page.waitForEvent('download'), page.click('#logs-ndjson')]);
    const logs = readFileSync(await nd.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { level: string });
    expect(logs.length).toBeGreaterThan(0);
    expect(logs.every((l) => l.level === 'info')).toBe(true);
    await clean(page, 'objects-11-run-filters');
  });

  it('the live run page keeps focus on Cancel and on the rejects pager across refreshes; a failed run is retried', async () => {
    // The run stays running while its load waits for the report (TRUNCATE waits for this lock).
    await holder.query('BEGIN');
    await holder.query(`LOCK TABLE "${schema}".orders_report IN ACCESS SHARE MODE`);
    await page.goto(`/ui/#/pipelines/${pipelineId}`);
    await page.waitForSelector('#run-now:not([disabled])');
    await page.click('#run-now');
    await page.click('#watch-run');
    await page.waitForSelector('#cancel-run');
    const runId = ((await page.textContent('#run-h')) ?? '').replace('Run ', '');
    await page.focus('#cancel-run');
    await markFocused(page);
    await runRefreshes(page, runId, 2);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('cancel-run');
    expect(await focusedIsMarked(page)).toBe(true);
    // The rejects pager: rows rejected before the load waits; Next keeps focus across refreshes too.
    await page.waitForSelector('#rejects-next:not([disabled])', { timeout: 60_000 });
    await page.focus('#rejects-next');
    await markFocused(page);
    await runRefreshes(page, runId, 2);
    expect(await focusedIsMarked(page)).toBe(true);
    await page.focus('#rejects-reason');
    await markFocused(page);
    await runRefreshes(page, runId, 2);
    expect(await focusedIsMarked(page)).toBe(true);
    await clean(page, 'objects-12-run-live');
    await page.click('#cancel-run');
    await page.click('dialog.confirm [data-action="confirm"]');
    await holder.query('ROLLBACK');
    await page.waitForSelector('#run-head .badge[data-status="cancelled"]', { timeout: 60_000 });

    // A failed run (its source table gone): Retry starts a new run, which succeeds once the table is back.
    await pgClient.query(`ALTER TABLE "${schema}".shop_orders RENAME TO shop_orders_away`);
    await page.goto(`/ui/#/pipelines/${pipelineId}`);
    await page.waitForSelector('#run-now:not([disabled])');
    await page.click('#run-now');
    await page.click('#watch-run');
    await page.waitForSelector('#run-head .badge[data-status="failed"]', { timeout: 60_000 });
    expect(await page.isVisible('#retry-run')).toBe(true);
    await clean(page, 'objects-13-run-failed');
    await pgClient.query(`ALTER TABLE "${schema}".shop_orders_away RENAME TO shop_orders`);
    const failedId = ((await page.textContent('#run-h')) ?? '').replace('Run ', '');
    await page.click('#retry-run');
    await page.waitForFunction((id) => !location.hash.includes(id) && location.hash.startsWith('#/runs/'), failedId);
    await page.waitForSelector('#run-head .badge[data-status="succeeded"]', { timeout: 120_000 });
  });
});
