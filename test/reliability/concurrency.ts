import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { parse, stringify } from 'yaml';
import { dashboardPayload, onboardingPackage } from '../../bench/lib/payloads.ts';
import { storeInvariants } from './checks.ts';
import { queryStore, request, requireRoute, scenario, startServer, until } from './harness.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

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
        const dir = join(ctx.server.opts.manifestsDir, 'dashboards');
        const first = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('converge'), headers: ctx.keyHeaders });
        expect(first.status).toBe(201);
        const file = readdirSync(dir).find((f) => f.endsWith('.yaml'));
        if (!file) throw new Error('the import wrote no dashboard manifest');
        const abs = join(dir, file);
        const relPath = `dashboards/${file}`;
        const template = parse(readFileSync(abs, 'utf8')) as { spec: { description: string } };
        const handEdit = (description: string) => {
          template.spec.description = description;
          const tmp = `${abs}.${description}.tmp~`;
          writeFileSync(tmp, stringify(template));
          renameSync(tmp, abs);
        };
        const apiWrite = (description: string) =>
          request(`${ctx.server.url}/v1/sdk/import`, { body: { ...dashboardPayload('converge'), description }, headers: ctx.keyHeaders });

        /** Settled: the status row is Synced at the file's bytes and the facade carries its description. */
        const settled = () =>
          until(
            () => {
              const bytes = readFileSync(abs);
              const onDisk = (parse(bytes.toString('utf8')) as { spec: { description: string } }).spec.description;
              const row = queryStore<{ hash: string; phase: string }>(ctx.server.opts.dbPath, 'SELECT hash, phase FROM manifests WHERE path = ?', relPath)[0];
              const stored = queryStore<{ description: string }>(ctx.server.opts.dbPath, `SELECT description FROM facades WHERE manifest_key = (SELECT key FROM manifests WHERE path = ?)`, relPath);
              return row?.phase === 'Synced' && row.hash === sha256(bytes) && stored.length === 1 && stored[0].description === onDisk ? onDisk : undefined;
            },
            15_000,
            'the dashboard to converge',
          );

        for (let round = 0; round < 3; round++) {
          const writes: Promise<unknown>[] = [];
          for (let i = 0; i < 6; i++) {
            writes.push(apiWrite(`api-${round}-${i}`));
            handEdit(`file-${round}-${i}`);
            await new Promise((r) => setTimeout(r, 3));
          }
          const answers = (await Promise.all(writes)) as { status: number }[];
          for (const a of answers) expect([200, 201]).toContain(a.status);
          await settled();
        }
        // The last write wins, whichever door it came through.
        handEdit('file-last');
        expect(await settled()).toBe('file-last');
        expect((await apiWrite('api-last')).status).toBeLessThan(300);
        expect(await settled()).toBe('api-last');
        expect(queryStore(ctx.server.opts.dbPath, `SELECT facade_id FROM facades`)).toHaveLength(1);
        expect(storeInvariants(ctx.server.opts.dbPath)).toEqual([]);
      } finally {
        await ctx.close();
      }
    });
  });
}
