import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { tenantSet } from '../controller/kinds/clientset/fixtures.ts';
import { ADMIN, startHarness, type Harness, signIn } from './harness.ts';

/**
 * The fleet pages end to end in headless Chromium against the real server: tenants stamped from a
 * ClientSet with waves (the second wave held for approval), a preview of a change with its field
 * diff, the approval; a client's lifecycle (suspend, resume, offboard with its retention date,
 * restore, purge: dry run, refused before the date, forced); the audit log filtered by client and
 * exported; the workers' empty state; the notifiers with their deliveries. Every page is checked
 * with axe at 1280 and 390 px and photographed into test/artifacts/.
 */

const doc = (kind: string, name: string, spec: unknown) => ({ apiVersion: 'bi.controller/v1', kind, metadata: { name }, spec });

/** The fixtures' ClientSet (a Connection and a Client per input) with `warehouse`; canary first, the rest held (maxUpdate 0). */
function retailSet(inputs: Record<string, string>[], warehouse = 'WH1') {
  const set = tenantSet('retail', { inputs, rollout: { waves: [{ selector: { tier: 'canary' }, maxUpdate: '100%' }, { selector: {}, maxUpdate: 0 }] } }) as {
    spec: { resources: { spec: Record<string, unknown> }[] };
  };
  set.spec.resources[0].spec.warehouse = warehouse;
  return set;
}

const INPUTS = [
  { id: 'TENA', displayName: 'Tenant A', conn: 'D2026A00301', tier: 'canary' },
  { id: 'TENB', displayName: 'Tenant B', conn: 'D2026A00302', tier: 'gold' },
  { id: 'TENC', displayName: 'Tenant C', conn: 'D2026A00303', tier: 'gold' },
];

describe('console: the fleet pages in a real browser', () => {
  let h: Harness;
  let page: Page;
  let receiver: Server;
  const received: string[] = [];

  const write = (rel: string, content: unknown) => {
    const abs = join(h.manifests, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, typeof content === 'string' ? content : stringify(content));
  };
  const sync = async () => {
    await h.server.runtime.syncNow();
    await h.server.runtime.reconciler.idle();
  };
  /** No axe violation at 1280 and 390 px (screenshots of both in test/artifacts/), and nothing wider than a 390 px phone. */
  const clean = async (name: string) => {
    expect(await h.check(page, name)).toEqual([]);
    const original = page.viewportSize();
    await page.setViewportSize({ width: 390, height: 844 });
    const scroll = await page.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(document.documentElement.scrollWidth))));
    if (original) await page.setViewportSize(original);
    expect(scroll, `${name}: the page scrolls sideways at 390 px`).toBeLessThanOrEqual(390);
  };
  const focusedId = () => page.evaluate(() => document.activeElement?.id ?? '');
  const tenantStates = () => page.$$eval('#clientset-tenants tr[data-input]', (rows) => rows.map((r) => `${(r as HTMLElement).dataset.input}:${(r as HTMLElement).dataset.state}`));

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(body);
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    h = await startHarness();
    write('notifiers/ops.yaml', doc('Notifier', 'ops', { type: 'webhook', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook` }));
    write('clients/LIFE.yaml', doc('Client', 'LIFE', {
      clientId: 'LIFE',
      clientName: 'Lifecycle Foods',
      connectionId: 'D2026A00310',
      coreModelId: 'SM2026A00001',
      vdm: [{ name: 'Sales', selectedColumns: ['region', 'revenue'] }],
    }));
    write('sets/retail.yaml', retailSet(INPUTS));
    await sync();
    ({ page } = await h.newPage());
    await signIn(page, ADMIN);
  }, 120_000);
  afterAll(async () => {
    await h?.close();
    await new Promise((r) => receiver?.close(r));
  });

  it('lists the ClientSets with their tenants by state; the page heading takes the focus', async () => {
    await page.click('#nav >> text=ClientSets');
    await page.waitForSelector('#clientset-table tr[data-clientset=retail]');
    expect(await focusedId()).toBe('clientsets-h');
    const row = await page.textContent('#clientset-table tr[data-clientset=retail]');
    expect(row).toContain('create-update');
    expect(row).toContain('3 Synced');
    expect(row).toContain('Nothing rolling out');
    await clean('fleet-clientsets');
  });

  it('a change rolls out in waves: the canary is updated, the second wave waits; Approve with the digest releases it', async () => {
    write('sets/retail.yaml', retailSet(INPUTS, 'WH2'));
    await sync();
    await page.click('#clientset-table a:text-is("retail")');
    await page.waitForSelector('#clientset-rollout');
    expect(await focusedId()).toBe('clientset-h');
    expect(await page.textContent('#clientset-rollout')).toContain('wave 2 waits for approval');
    expect(await tenantStates()).toEqual(['TENA:Synced', 'TENB:Pending', 'TENC:Pending']);
    // Each tenant links to its client.
    expect(await page.getAttribute('#clientset-tenants tr[data-input=TENB] a', 'href')).toBe('#/clients/TENB');
    expect(await page.$$eval('#clientset-history li', (lis) => lis.length)).toBe(2);
    const digest = (await page.getAttribute('#clientset-approve', 'data-digest')) ?? '';
    expect(digest).not.toBe('');
    expect(await page.textContent('#clientset-approve')).toContain(digest.replace(/^sha256:/, '').slice(0, 12));

    // The page reads the set again every few seconds: the focused control stays the same node, focused.
    await page.focus('#clientset-tenants tr[data-input=TENC] a');
    await page.evaluate(() => ((document.activeElement as HTMLElement & { mark?: boolean }).mark = true));
    await page.waitForResponse((r) => r.url().endsWith('/v1/reconciler/clientsets/retail') && r.request().method() === 'GET');
    await page.evaluate(() => new Promise((r) => setTimeout(r, 50)));
    expect(await page.evaluate(() => (document.activeElement as HTMLElement & { mark?: boolean }).mark === true && document.activeElement?.textContent)).toBe('TENC');
    await clean('fleet-clientset-held');

    await page.click('#clientset-approve');
    await page.waitForSelector('#approve-dialog');
    await page.click('#approve-dialog-confirm');
    await page.waitForSelector('#clientset-flash .notice.ok');
    expect(await page.textContent('#clientset-flash')).toContain('Approved retail');
    expect(await tenantStates()).toEqual(['TENA:Synced', 'TENB:Synced', 'TENC:Synced']);
    expect(await page.isVisible('#clientset-approve')).toBe(false);
    const warehouses = h.server.runtime.db.prepare("SELECT warehouse FROM connections WHERE manifest_key LIKE 'Connection/ten%-wh' ORDER BY manifest_key").all();
    expect(warehouses).toEqual([{ warehouse: 'WH2' }, { warehouse: 'WH2' }, { warehouse: 'WH2' }]);
  });

  it('previews a changed manifest pasted as YAML: per tenant create, update or unchanged with the field changes; nothing written', async () => {
    const next = retailSet([{ ...INPUTS[0] }, { ...INPUTS[1], displayName: 'Tenant B Renamed' }, INPUTS[2], { id: 'TEND', displayName: 'Tenant D', conn: 'D2026A00304', tier: 'gold' }], 'WH2');
    await page.fill('#preview-manifest', stringify(next));
    await page.click('#preview-submit');
    await page.waitForSelector('#preview-table');
    const actions = await page.$$eval('#preview-table tr[data-input]', (rows) => rows.map((r) => `${(r as HTMLElement).dataset.input}:${(r as HTMLElement).dataset.action}`));
    expect(actions).toEqual(['TENA:unchanged', 'TENB:update', 'TENC:unchanged', 'TEND:create']);
    const changes = await page.textContent('#preview-table tr[data-input=TENB]');
    expect(changes).toContain('Client/TENB');
    expect(changes).toContain('spec.clientName');
    expect(changes).toContain('"Tenant B" → "Tenant B Renamed"');
    expect(await page.textContent('#preview-summary')).toContain('1 create');
    expect(h.server.runtime.db.prepare("SELECT COUNT(*) AS n FROM clients WHERE client_id = 'TEND'").get()).toEqual({ n: 0 });
    await clean('fleet-clientset-preview');

    // A manifest the server refuses: the problem named by its field path, the field marked invalid.
    await page.fill('#preview-manifest', 'kind: ClientSet\nmetadata: {name: retail}\nspec: {resources: nope}\n');
    await page.click('#preview-submit');
    await page.waitForSelector('#preview-result .notice.bad');
    expect(await page.textContent('#preview-result')).toContain('spec.resources');
    expect(await page.getAttribute('#preview-manifest', 'aria-invalid')).toBe('true');
    await clean('fleet-clientset-preview-refused');

    // A 400 with structured problems: each shown by its path.
    const problems = [{ path: 'spec.inputs[1].id', message: 'must be unique (ACME twice)' }, { path: 'spec.rollout.waves[0].maxUpdate', message: 'must be 0, a count or a percentage' }];
    await page.route('**/v1/reconciler/clientsets/preview', (route) => route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify({ success: false, error: 'Validation failed', code: 'VALIDATION', problems }) }));
    try {
      await page.click('#preview-submit');
      await page.waitForSelector('#preview-result li[data-path="spec.rollout.waves[0].maxUpdate"]');
      expect(await page.$$eval('#preview-result li[data-path]', (lis) => lis.map((li) => li.textContent))).toEqual([
        'spec.inputs[1].id must be unique (ACME twice)',
        'spec.rollout.waves[0].maxUpdate must be 0, a count or a percentage',
      ]);
    } finally {
      await page.unroute('**/v1/reconciler/clientsets/preview');
    }
  });

  it('a generated client says its lifecycle goes through its ClientSet', async () => {
    await page.goto('/ui/#/clients/TENA');
    await page.waitForSelector('#client-lifecycle');
    expect(await page.textContent('#lifecycle-generated')).toContain('ClientSet/retail');
    expect(await page.isVisible('#lifecycle-suspend')).toBe(false);
    expect(await page.isVisible('#offboard')).toBe(false);
  });

  it("runs a client's lifecycle: suspend, resume, offboard (retained until a date), restore, purge (dry run, refused before the date, forced)", async () => {
    const status = () => page.getAttribute('#client-lifecycle', 'data-status');
    await page.goto('/ui/#/clients/LIFE');
    await page.waitForSelector('#client-lifecycle[data-status=ACTIVE]');
    await clean('fleet-client-lifecycle');

    await page.click('#lifecycle-suspend');
    await page.click('#suspend-dialog-confirm');
    await page.waitForSelector('#client-lifecycle[data-status=SUSPENDED]');
    expect(await page.textContent('#client-flash')).toContain('LIFE is SUSPENDED');
    // The outcome takes the focus (the button that was used is gone).
    expect(await page.evaluate(() => document.activeElement?.closest('#client-flash') !== null)).toBe(true);

    await page.click('#lifecycle-resume');
    await page.waitForSelector('#client-lifecycle[data-status=ACTIVE]');

    await page.click('#offboard');
    await page.waitForSelector('#offboard-dialog');
    expect(await page.isDisabled('#offboard-dialog-confirm')).toBe(true);
    await page.fill('#offboard-dialog input[name=confirm]', 'LIFE');
    await page.click('#offboard-dialog-confirm');
    await page.waitForSelector('#client-lifecycle[data-status=OFFBOARDED]');
    const retainUntil = h.server.runtime.db.prepare("SELECT retain_until AS r FROM clients WHERE client_id = 'LIFE'").get() as { r: string };
    expect(await page.getAttribute('#lifecycle-retain time', 'datetime')).toBe(retainUntil.r);
    expect(await page.textContent('#lifecycle-retain')).toContain('Retained until');
    await clean('fleet-client-offboarded');

    await page.click('#lifecycle-restore');
    await page.waitForSelector('#client-lifecycle[data-status=ACTIVE]');
    await page.click('#offboard');
    await page.fill('#offboard-dialog input[name=confirm]', 'LIFE');
    await page.click('#offboard-dialog-confirm');
    await page.waitForSelector('#client-lifecycle[data-status=OFFBOARDED]');

    // BI_PURGE_DRY_RUN: the dialog's purge answers what it would remove; nothing is removed.
    const config = h.server.runtime.config as { purgeDryRun: boolean };
    config.purgeDryRun = true;
    try {
      await page.click('#lifecycle-purge');
      await page.waitForSelector('#purge-dialog');
      // Before the retention date the force is offered at once.
      expect(await page.isVisible('#purge-force')).toBe(true);
      await page.check('#purge-force');
      await page.fill('#purge-dialog input[name=confirm]', 'LIFE');
      await page.click('#purge-dialog-confirm');
      await page.waitForSelector('#purge-dry-run');
      expect(await page.textContent('#purge-dry-run')).toContain('nothing was removed');
      const kinds = await page.$$eval('#purge-removes li', (lis) => lis.map((li) => (li as HTMLElement).dataset.kind));
      expect(kinds).toContain('model');
      expect(kinds).toContain('vdm');
      expect(await status()).toBe('OFFBOARDED');
      await clean('fleet-client-purge-dry-run');
    } finally {
      config.purgeDryRun = false;
    }

    // Without force, a purge before the date is refused (409) and the force is offered; forced, it purges.
    await page.click('#lifecycle-purge');
    await page.fill('#purge-dialog input[name=confirm]', 'LIFE');
    await page.click('#purge-dialog-confirm');
    await page.waitForSelector('#purge-dialog .dialog-error .notice.bad');
    expect(await page.textContent('#purge-dialog .dialog-error')).toContain('retained until');
    expect(await focusedId()).toBe('purge-force');
    await page.check('#purge-force');
    await page.click('#purge-dialog-confirm');
    await page.waitForSelector('#client-lifecycle[data-status=DELETED]');
    expect(await page.textContent('#purge-done')).toContain('LIFE was purged');
    expect(h.server.runtime.db.prepare("SELECT status FROM clients WHERE client_id = 'LIFE'").get()).toEqual({ status: 'DELETED' });
  });

  it('shows the audit log filtered by client (kept in the address), pages older entries and exports NDJSON', async () => {
    await page.click('#nav >> text=Audit log');
    await page.waitForSelector('#audit-table');
    expect(await focusedId()).toBe('audit-h');
    await page.fill('input[name=clientId]', 'LIFE');
    await page.click('#audit-apply');
    await page.waitForFunction(() => location.hash.includes('clientId=LIFE') && document.querySelectorAll('#audit-table tr[data-seq]').length > 0);
    const actions = await page.$$eval('#audit-table tr[data-seq]', (rows) => rows.map((r) => (r as HTMLElement).dataset.action));
    for (const a of ['client.suspend', 'client.resume', 'client.offboard', 'client.restore', 'client.purge']) expect(actions).toContain(a);
    const seqs = await page.$$eval('#audit-table tr[data-seq]', (rows) => rows.map((r) => Number((r as HTMLElement).dataset.seq)));
    expect(seqs).toEqual([...seqs].sort((a, b) => b - a));
    expect(await page.$$eval('#audit-table td a[href^="#/clients/"]', (as) => [...new Set(as.map((a) => a.textContent))])).toEqual(['LIFE']);
    // A user actor is named (its ID beside the name), not only an ID.
    expect(await page.$$eval('#audit-table .actor-name', (els) => [...new Set(els.map((e) => e.textContent))])).toEqual([ADMIN.username]);
    await clean('fleet-audit');

    // The filter survives a reload.
    await page.reload();
    await page.waitForSelector('#audit-table tr[data-seq]');
    expect(await page.inputValue('input[name=clientId]')).toBe('LIFE');
    expect(await page.$$eval('#audit-table tr[data-seq]', (rows) => rows.length)).toBe(seqs.length);

    // Export: the same filter as NDJSON, oldest first.
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#audit-export')]);
    expect(download.suggestedFilename()).toMatch(/^audit-.*\.ndjson$/);
    const lines = readFileSync(await download.path(), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { seq: number; clientId?: string });
    expect(lines.map((l) => l.seq)).toEqual([...seqs].reverse());
    expect(new Set(lines.map((l) => l.clientId))).toEqual(new Set(['LIFE']));
    await page.waitForSelector('#audit-export-status .notice.ok');

    // Paged (5 a page here): "Older entries" appends the next page; on the last, the button goes and
    // focus moves to the first entry it brought.
    await page.goto('/ui/#/audit?clientId=LIFE&limit=5');
    await page.waitForSelector('#audit-table tr[data-seq]');
    const rows = () => page.$$eval('#audit-table tr[data-seq]', (trs) => trs.map((r) => Number((r as HTMLElement).dataset.seq)));
    expect(await rows()).toEqual(seqs.slice(0, 5));
    for (let shown = 5; shown < seqs.length; shown += 5) {
      await page.click('#audit-older');
      await page.waitForFunction((n) => document.querySelectorAll('#audit-table tr[data-seq]').length > n, shown);
    }
    expect(await rows()).toEqual(seqs);
    expect(await page.isVisible('#audit-older')).toBe(false);
    expect(await page.evaluate(() => (document.activeElement?.closest('tr') as HTMLElement | null)?.dataset.seq)).toBe(String(seqs[Math.floor((seqs.length - 1) / 5) * 5]));
    expect(await page.textContent('#audit-count')).toContain(`${seqs.length} entries shown`);
    expect(page.url()).toContain('limit=5');
  });

  it('workers: a clear empty state in in-process mode', async () => {
    await page.click('#nav >> text=Workers');
    await page.waitForSelector('#workers-empty');
    expect(await focusedId()).toBe('workers-h');
    expect(await page.textContent('#workers-empty')).toContain('in-process mode');
    await clean('fleet-workers');
  });

  it('workers in queue mode (the answer of a controller with BI_QUEUE_URL): state, heartbeat age, running runs linked', async () => {
    // Queue mode needs worker processes (test/e2e/runs/workers.test.ts drives real ones); the page is
    // checked here against that read's answer.
    const now = Date.now();
    const workers = [
      { name: 'etl-1:4242', version: '1.4.0', heartbeatAt: new Date(now - 4_000).toISOString(), state: 'up', running: ['RUN-17', 'RUN-18'], concurrency: 2 },
      { name: 'etl-2:777', version: '1.4.0', heartbeatAt: new Date(now - 25 * 60_000).toISOString(), state: 'lost', running: [], concurrency: 4 },
    ];
    let answer: unknown = { success: true, mode: 'queue', workers };
    await page.route('**/v1/reconciler/workers', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(answer) }));
    try {
      await page.goto('/ui/#/workers');
      await page.waitForSelector('#worker-table');
      expect(await page.textContent('#workers-count')).toBe('1 of 2 workers up');
      expect(await page.$$eval('#worker-table tr[data-worker]', (rows) => rows.map((r) => `${(r as HTMLElement).dataset.worker}:${(r as HTMLElement).dataset.state}`))).toEqual(['etl-1:4242:up', 'etl-2:777:lost']);
      expect(await page.$$eval('#worker-table a[href^="#/runs/"]', (as) => as.map((a) => a.getAttribute('href')))).toEqual(['#/runs/RUN-17', '#/runs/RUN-18']);
      expect(await page.textContent('#worker-table tr[data-worker="etl-2:777"]')).toContain('25 min ago');
      await clean('fleet-workers-queue');
      // A poll redraws in place: the focused run link stays focused while the list changes around it.
      await page.focus('#worker-table a[href="#/runs/RUN-18"]');
      answer = { success: true, mode: 'queue', workers: [{ ...workers[0], running: ['RUN-18'] }] };
      await page.waitForResponse((r) => r.url().endsWith('/v1/reconciler/workers'));
      await page.waitForFunction(() => document.querySelectorAll('#worker-table tr[data-worker]').length === 1);
      expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toBe('#/runs/RUN-18');
      // Queue mode with no worker: the runs wait queued, the page says how to start one.
      answer = { success: true, mode: 'queue', workers: [] };
      await page.goto('/ui/#/clients');
      await page.goto('/ui/#/workers');
      await page.waitForSelector('#workers-empty');
      expect(await page.textContent('#workers-empty')).toContain('runs wait queued');
    } finally {
      await page.unroute('**/v1/reconciler/workers');
    }
  });

  it('notifiers: each with its delivery state', async () => {
    await page.click('#nav >> text=Notifiers');
    await page.waitForSelector('#notifier-table tr[data-notifier=ops]');
    expect(await focusedId()).toBe('notifiers-h');
    expect(received.length).toBeGreaterThan(0);
    const row = await page.textContent('#notifier-table tr[data-notifier=ops]');
    expect(row).toContain('webhook');
    expect(row).toContain('delivered');
    await clean('fleet-notifiers');
  });
});
