import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect } from 'vitest';
import { parse, stringify } from 'yaml';
import { routeExists } from '../../bench/lib/api-client.ts';
import { dashboardPayload, manifest, onboardingPackage, type ManifestObject } from '../../bench/lib/payloads.ts';
import { folderStoreAgreement, storeInvariants } from './checks.ts';
import { queryStore, request, requireRoute, scenario, startServer, until } from './harness.ts';

export function concurrencyScenarios(): void {
  describe('concurrency', () => {
    scenario('50 simultaneous onboardings of 10 clientIds: exactly 10 clients, 10 × 201', async (s) => {
      const ctx = await startServer('concurrent-onboard');
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/client/onboard', ctx.keyHeaders, 'issue 4');
        const ids = Array.from({ length: 10 }, (_, i) => `RACE${i}`);
        const results = await Promise.all(
          Array.from({ length: 50 }, (_, i) =>
            // Mixed case: the clientId is uppercased, so `race3` and `RACE3` are the same client.
            request(`${ctx.server.url}/v1/sdk/client/onboard`, { body: onboardingPackage(i % 2 ? ids[i % 10] : ids[i % 10].toLowerCase()), headers: ctx.keyHeaders }),
          ),
        );
        const codes = results.map((r) => r.status);
        expect(codes.filter((c) => c === 201)).toHaveLength(10);
        expect(codes.filter((c) => c === 200)).toHaveLength(40);
        const created = results.filter((r) => r.status === 201).map((r) => (r.json as { client: { clientId: string } }).client.clientId);
        expect(created.sort()).toEqual([...ids].sort());
        for (const r of results.filter((x) => x.status === 200)) expect((r.json as { status: string }).status).toBe('ALREADY_EXISTS');
        const rows = queryStore<{ client_id: string; status: string }>(ctx.server.opts.dbPath, 'SELECT client_id, status FROM clients ORDER BY client_id');
        expect(rows).toEqual(ids.map((id) => ({ client_id: id, status: 'ACTIVE' })).sort((a, b) => a.client_id.localeCompare(b.client_id)));
        expect(readdirSync(join(ctx.server.opts.manifestsDir, 'clients')).filter((f) => !f.startsWith('.')).sort()).toEqual(ids.map((id) => `${id}.yaml`).sort());
        expect(storeInvariants(ctx.server.opts.dbPath)).toEqual([]);
      } finally {
        await ctx.close();
      }
    });

    scenario('simultaneous file edits and API writes on one key converge to the last write', async (s) => {
      const ctx = await startServer('concurrent-key');
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const onboarding = await routeExists(ctx.server.url, 'POST', '/v1/sdk/client/onboard', ctx.keyHeaders);
        const root = ctx.server.opts.manifestsDir;
        const db = ctx.server.opts.dbPath;
        const save = (rel: string, m: ManifestObject) => {
          mkdirSync(dirname(join(root, rel)), { recursive: true });
          const tmp = join(root, `${rel}.${Math.random().toString(36).slice(2)}.tmp~`);
          writeFileSync(tmp, stringify(m));
          renameSync(tmp, join(root, rel));
        };
        const dashboardFile = (name: string, description: string) => save(`dashboards/${name}.yaml`, manifest('Dashboard', name, { ...dashboardPayload('converge'), description }));
        const clientFile = (id: string, clientName: string) => save(`clients/${id}.yaml`, manifest('Client', id, { ...onboardingPackage(id), clientName }));

        for (let round = 0; round < 3; round++) {
          // The API picks converge, converge-2, … while the same files are written by hand.
          const writes: Promise<{ status: number; text: string }>[] = [];
          for (let i = 0; i < 4; i++) {
            writes.push(request(`${ctx.server.url}/v1/sdk/import`, { body: { ...dashboardPayload('converge'), description: `api-${round}-${i}` }, headers: ctx.keyHeaders }));
            dashboardFile(i === 0 ? 'converge' : `converge-${i + 1}`, `file-${round}-${i}`);
          }
          if (onboarding) {
            writes.push(request(`${ctx.server.url}/v1/sdk/client/onboard`, { body: onboardingPackage(`CONV${round}`), headers: ctx.keyHeaders }));
            clientFile(`CONV${round}`, `file CONV${round}`);
          }
          for (const a of await Promise.all(writes)) expect(a.status, a.text).toBeLessThan(500);
          const problems = await until(() => (convergence(db, root).length === 0 ? 'ok' : undefined), 20_000, 'convergence').catch(() => convergence(db, root));
          expect(problems === 'ok' ? [] : problems).toEqual([]);
        }
        // The last write wins, whichever door it came through.
        dashboardFile('converge-2', 'file-last');
        if (onboarding) clientFile('CONV0', 'file last');
        await until(() => convergence(db, root).length === 0 && queryStore<{ description: string }>(db, `SELECT description FROM facades WHERE description = 'file-last'`).length === 1, 20_000, 'the last hand edit');
        expect(storeInvariants(db)).toEqual([]);
      } finally {
        await ctx.close();
      }
    });
  });
}

/** Problems between the dashboards/ and clients/ files and the store (empty = converged). */
function convergence(db: string, root: string): string[] {
  const files = ['dashboards', 'clients'].flatMap((d) => {
    try {
      return readdirSync(join(root, d)).filter((f) => f.endsWith('.yaml')).map((f) => `${d}/${f}`);
    } catch {
      return [];
    }
  });
  const problems = folderStoreAgreement(db, root, files);
  for (const f of files) {
    const spec = (parse(readFileSync(join(root, f), 'utf8')) as { spec: { description?: string; clientId?: string; clientName?: string } }).spec;
    const key = queryStore<{ key: string }>(db, `SELECT key FROM manifests WHERE path = ? AND phase = 'Synced'`, f)[0]?.key;
    if (f.startsWith('dashboards/')) {
      const rows = queryStore<{ description: string }>(db, 'SELECT description FROM facades WHERE manifest_key = ?', key);
      if (rows.length !== 1 || rows[0].description !== spec.description) problems.push(`${f}: file says ${spec.description}, store ${JSON.stringify(rows)}`);
    } else {
      const rows = queryStore<{ client_name: string }>(db, `SELECT client_name FROM clients WHERE client_id = ? AND status = 'ACTIVE'`, String(spec.clientId).toUpperCase());
      if (rows.length !== 1 || rows[0].client_name !== spec.clientName) problems.push(`${f}: file says ${spec.clientName}, store ${JSON.stringify(rows)}`);
    }
  }
  return problems;
}
