import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginAs, type TestSession } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';

const ROWS = 100_000;

function p99(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))];
}

/** Seeds the registry with `n` rows in one transaction (dates spread, some ties, all statuses). */
function seed(t: TestApp, n: number): void {
  const insert = t.rt.db.prepare(
    `INSERT INTO clients (client_id, client_name, connection_id, model_id, vdm_ids, facade_ids, experiment_ids, core_model_id, status,
       onboarded_by, onboarded_date, last_modified_date, is_active, is_deleted)
     VALUES (?, ?, 'D2026A00001', ?, '["V2026A00001"]', '[]', '[]', 'SM2026A00001', ?, 'U2026A00001', ?, ?, 1, 0)`,
  );
  const base = Date.parse('2026-01-01T00:00:00.000Z');
  t.rt.db.transaction(() => {
    for (let i = 0; i < n; i++) {
      const date = new Date(base + Math.floor(i / 3) * 1000).toISOString();
      const status = i % 10 === 0 ? 'FAILED' : i % 17 === 0 ? 'DELETED' : 'ACTIVE';
      insert.run(`CLIENT_${String(i).padStart(6, '0')}`, `Client number ${i}`, `SM2026A${String(i % 99999).padStart(5, '0')}`, status, date, date);
    }
  })();
}

describe(`client listing at ${ROWS.toLocaleString('en')} rows`, () => {
  let t: TestApp;
  let admin: TestSession;
  beforeAll(async () => {
    t = await makeTestApp();
    admin = await loginAs(t);
    seed(t, ROWS);
  });
  afterAll(async () => t.close());

  const list = (q: string) => t.app.inject({ method: 'GET', url: `/v1/bi/admin/clients/${admin.userId}${q}`, headers: admin.headers });

  async function measure(queries: string[]): Promise<number[]> {
    const out: number[] = [];
    for (const q of queries) {
      const started = performance.now();
      const res = await list(q);
      out.push(performance.now() - started);
      expect(res.statusCode).toBe(200);
    }
    return out;
  }

  it('serves any page without search well under 20 ms at p99', async () => {
    await measure(['?page=1', '?page=500']); // warm up
    const pages = Array.from({ length: 200 }, (_, i) => `?page=${1 + ((i * 37) % 1000)}&limit=100${i % 3 === 0 ? '&status=ACTIVE' : ''}`);
    const samples = await measure(pages);
    const last = await list('?page=1000&limit=100');
    expect(last.json().pagination).toEqual({ page: 1000, limit: 100, total: ROWS, totalPages: 1000 });
    expect(last.json().data).toHaveLength(100);
    const first = await list('?limit=2');
    expect(first.json().data.map((c: { clientId: string }) => c.clientId)).toEqual(['CLIENT_099999', 'CLIENT_099996']);
    console.log(`listing p99 ${p99(samples).toFixed(2)} ms, max ${Math.max(...samples).toFixed(2)} ms over ${samples.length} pages`);
    // Measured ~11 ms locally (README); the bound leaves room for a loaded CI machine but not for a regression.
    expect(p99(samples)).toBeLessThan(40);
  });

  it('searches the whole registry in linear time', async () => {
    const samples = await measure(['?search=client_0999', '?search=' + encodeURIComponent('(a+)+$'), '?search=number%201234']);
    console.log(`search ${samples.map((s) => s.toFixed(1)).join(' / ')} ms`);
    const res = await list('?search=client_09999&limit=5');
    expect(res.json().pagination.total).toBe(10);
    expect(Math.max(...samples)).toBeLessThan(2000);
  });
});
