import { spawn } from 'node:child_process';
import { describe, expect } from 'vitest';
import { dashboardPayload, onboardingPackage } from '../../bench/lib/payloads.ts';
import { BICTL } from '../../bench/lib/server-process.ts';
import type { BenchServer } from '../../bench/lib/setup.ts';
import { storeInvariants } from './checks.ts';
import { queryStore, request, scenario, startServer } from './harness.ts';

/** `bictl <args>` as its own process on the server's store, as an operator runs it. */
function bictl(ctx: BenchServer, args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME, BI_MANIFESTS_DIR: ctx.server.opts.manifestsDir, BI_DB_PATH: ctx.server.opts.dbPath };
  const child = spawn(process.execPath, [BICTL, ...args], { cwd: ctx.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, out: out.trim(), err: err.trim() })));
}

interface Answered {
  kind: 'import' | 'onboard';
  id: string;
  ids: string[];
}

export function oneWriterScenarios(): void {
  describe('one store, one writer', () => {
    scenario('bictl sync beside a server taking API writes goes through the server: every answered write keeps its IDs', async () => {
      const ctx = await startServer('one-writer');
      try {
        const base = ctx.server.url;
        const answered: Answered[] = [];
        let syncing = true;
        const writer = async (w: number) => {
          for (let i = 0; syncing || i < 5; i++) {
            const onboard = i % 4 === 3;
            const id = onboard ? `OW${w}X${String(i).padStart(3, '0')}` : `ow-dash-${w}-${i}`;
            const res = onboard
              ? await request(`${base}/v1/sdk/client/onboard`, { body: onboardingPackage(id, { vdms: 1, dashboards: 1 }), headers: ctx.keyHeaders })
              : await request(`${base}/v1/sdk/import`, { body: dashboardPayload(id), headers: ctx.keyHeaders });
            expect(res.status, res.text).toBeLessThan(300);
            const body = res.json as Record<string, unknown>;
            if (onboard) {
              const c = body.client as { clientId: string; vdmIds: string[]; facadeIds: string[] };
              answered.push({ kind: 'onboard', id: c.clientId, ids: [...c.vdmIds, ...c.facadeIds] });
            } else answered.push({ kind: 'import', id, ids: [body.facadeId as string] });
          }
        };
        const writers = [1, 2, 3, 4].map(writer);
        const syncs: Awaited<ReturnType<typeof bictl>>[] = [];
        try {
          for (let n = 0; n < 3; n++) syncs.push(await bictl(ctx, ['sync']));
        } finally {
          syncing = false;
        }
        await Promise.all(writers);
        for (const s of syncs) {
          expect(s.err).toBe('');
          expect(s.out).toMatch(new RegExp(`^through the server \\(pid ${ctx.server.pid}\\): \\d+ applied, \\d+ unchanged, 0 pruned, 0 failed, 0 invalid$`));
          expect(s.code).toBe(0);
        }
        expect(answered.length).toBeGreaterThan(20);
        const db = ctx.server.opts.dbPath;
        const missing: string[] = [];
        for (const a of answered) {
          for (const id of a.ids) {
            const table = id.startsWith('V') ? 'vdms' : 'facades';
            const col = table === 'vdms' ? 'vdm_id' : 'facade_id';
            if (queryStore(db, `SELECT 1 FROM ${table} WHERE ${col} = ?`, id).length !== 1) missing.push(`${a.kind} ${a.id}: ${id}`);
          }
          if (a.kind === 'onboard') {
            const row = queryStore<{ status: string }>(db, 'SELECT status FROM clients WHERE client_id = ?', a.id)[0];
            if (row?.status !== 'ACTIVE') missing.push(`client ${a.id} is ${row?.status ?? 'absent'}`);
          }
        }
        expect(missing).toEqual([]);
        expect(queryStore(db, `SELECT key FROM manifests WHERE phase = 'Pruned'`)).toEqual([]);
        expect(storeInvariants(db)).toEqual([]);
        // The server still owns its store once the syncs are done: the next sync goes through it too.
        const again = await bictl(ctx, ['sync']);
        expect(again.out).toMatch(/^through the server/);
      } finally {
        await ctx.close();
      }
    });
  });
}
