import Database from 'better-sqlite3';
import { login, request, routeExists } from '../lib/api-client.ts';
import { load, percentile, round } from '../lib/load.ts';
import type { Report } from '../lib/report.ts';
import { startBenchServer } from '../lib/setup.ts';

const BENCH = 'registry';
const WORDS = ['NORTHWIND', 'ACME', 'GLOBEX', 'INITECH', 'UMBRELLA', 'STARK', 'WAYNE', 'HOOLI', 'PIEDPIPER', 'SOYLENT', 'TYRELL', 'VANDELAY'];
const TRADES = ['Retail', 'Logistics', 'Foods', 'Pharma', 'Energy', 'Media', 'Banking', 'Insurance'];

const pad = (n: number, w = 5) => String(n).padStart(w, '0');

/** A realistic registry row (docs/contract/api.md §2.2) for client number `i`. */
export function registryRow(i: number, userId: string) {
  const word = WORDS[i % WORDS.length];
  const status = i % 50 === 7 ? 'DELETED' : i % 17 === 3 ? 'FAILED' : 'ACTIVE';
  const onboarded = new Date(Date.UTC(2025, 0, 1) + ((i * 7_919_113) % (700 * 86_400_000))).toISOString();
  const vdms = Array.from({ length: 1 + (i % 3) }, (_, k) => `V2026A${pad((i * 3 + k) % 99_999)}`);
  const facades = status === 'ACTIVE' && i % 4 !== 0 ? [`F2026A${pad(i % 99_999)}`] : [];
  const experiments = facades.length ? [`E2026A${pad((i * 2) % 99_999)}`, `E2026A${pad((i * 2 + 1) % 99_999)}`] : [];
  return {
    client_id: `${word}_${pad(i, 6)}`,
    client_name: `${word[0]}${word.slice(1).toLowerCase()} ${TRADES[i % TRADES.length]} ${pad(i, 6)}`,
    description: `Tenant ${i} of the ${TRADES[i % TRADES.length].toLowerCase()} sector`,
    connection_id: `D2026A${pad(i % 99_999)}`,
    model_id: `SM2026A${pad((i + 1) % 99_999)}`,
    vdm_ids: JSON.stringify(vdms),
    facade_ids: JSON.stringify(facades),
    experiment_ids: JSON.stringify(experiments),
    core_model_id: 'SM2026A00001',
    status,
    onboarded_by: userId,
    onboarded_date: onboarded,
    last_modified_date: onboarded,
    is_active: status === 'ACTIVE' ? 1 : 0,
    is_deleted: status === 'DELETED' ? 1 : 0,
    failed_step: status === 'FAILED' ? 'publish vdm' : null,
    failure_reason: status === 'FAILED' ? 'column revenue_net does not exist in the core model' : null,
    manifest_key: `Client/${word}_${pad(i, 6)}`,
  };
}

/** Inserts `n` registry rows in one transaction (the physical floor); returns ms. */
export function insertRegistryRows(dbPath: string, n: number, userId: string): number {
  const db = new Database(dbPath);
  db.pragma('busy_timeout = 5000');
  const cols = Object.keys(registryRow(0, userId));
  const insert = db.prepare(`INSERT INTO clients (${cols.join(', ')}) VALUES (${cols.map((c) => `@${c}`).join(', ')})`);
  const rows = Array.from({ length: n }, (_, i) => registryRow(i, userId));
  const t0 = performance.now();
  db.transaction(() => {
    for (const r of rows) insert.run(r);
  })();
  const ms = performance.now() - t0;
  db.close();
  return ms;
}

/** The floor of a page read: the same page straight from better-sqlite3 (rows + count). */
function pageFloor(dbPath: string, runs: number, pages: number): { p50: number; p99: number } {
  const db = new Database(dbPath, { readonly: true });
  const page = db.prepare('SELECT * FROM clients ORDER BY onboarded_date DESC, client_id LIMIT 100 OFFSET ?');
  const count = db.prepare('SELECT count(*) AS n FROM clients');
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    page.all(((i * 37) % pages) * 100);
    count.get();
    times.push(performance.now() - t0);
  }
  db.close();
  return { p50: round(percentile(times, 50), 3), p99: round(percentile(times, 99), 3) };
}

/** 5. GET /v1/bi/admin/clients/{userId} over `rows` registry rows: pages with and without `search`. */
export async function registryBench(report: Report, opts: { rows: number; seconds: number; base: string }): Promise<void> {
  const ctx = await startBenchServer({ prefix: 'bench-registry', base: opts.base });
  try {
    const listPath = `/v1/bi/admin/clients/${ctx.session.userId}`;
    if (!(await routeExists(ctx.server.url, 'GET', listPath, ctx.session.headers))) {
      report.skip(BENCH, 'client list', `GET ${listPath.replace(ctx.session.userId, '{userId}')} is not in this build (issue 4 not merged)`);
      return;
    }
    await ctx.server.stop();
    const ms = insertRegistryRows(ctx.server.opts.dbPath, opts.rows, ctx.session.userId);
    report.add({ bench: 'floors', figure: `better-sqlite3: ${opts.rows} registry rows in one transaction`, value: round(ms / 1000, 3), unit: 's' });
    await ctx.server.start();
    await ctx.server.waitReady();
    const session = await login(ctx.server.url, ctx.server.opts.adminUser, ctx.server.opts.adminPassword);
    const pages = Math.floor(opts.rows / 100);
    const probe = await request(`${ctx.server.url}${listPath}?page=2&limit=100`, { headers: session.headers });
    const total = (probe.json as { pagination?: { total?: number } } | undefined)?.pagination?.total;
    if (probe.status !== 200 || total === undefined || total < opts.rows) {
      report.skip(BENCH, 'client list', `the list answered ${probe.status} with total ${total}: ${probe.text.slice(0, 200)}`);
      return;
    }
    const url = `${ctx.server.url}${listPath}`;
    const plain = await load({ url, headers: session.headers, connections: 4, duration: opts.seconds, path: (i) => `${listPath}?page=${1 + ((i * 37) % pages)}&limit=100` });
    report.add({ bench: BENCH, figure: `page of 100 among ${opts.rows}: p99`, value: plain.p99, unit: 'ms', goal: '< 20', detail: { p50: plain.p50, rps: plain.rps, statusCodes: plain.statusCodes } });
    const searches = ['^acme', 'retail 0001', 'hooli|wayne', 'STARK_00[0-9]+7$', 'pharma'];
    const searched = await load({
      url,
      headers: session.headers,
      connections: 4,
      duration: opts.seconds,
      path: (i) => `${listPath}?search=${encodeURIComponent(searches[i % searches.length])}&page=1&limit=100`,
    });
    report.add({ bench: BENCH, figure: `page with search among ${opts.rows}: p99`, value: searched.p99, unit: 'ms', goal: '< 100', detail: { p50: searched.p50, rps: searched.rps, statusCodes: searched.statusCodes, searches } });
    const floor = pageFloor(ctx.server.opts.dbPath, 500, pages);
    report.add({ bench: 'floors', figure: 'better-sqlite3: one page + count, direct: p99', value: floor.p99, unit: 'ms', detail: { p50: floor.p50 } });
    report.add({ bench: 'floors', figure: 'list page p99 / direct page p99', value: round(plain.p99 / Math.max(floor.p99, 0.001), 1), unit: 'x' });
  } finally {
    await ctx.close();
  }
}
