import { describe, expect } from 'vitest';
import { ManifestFiles } from '../../controller/sources/files.ts';
import { dashboardPayload, onboardingPackage } from '../../bench/lib/payloads.ts';
import { folderStoreAgreement, storeInvariants } from './checks.ts';
import { git, gitLog } from '../../bench/lib/git.ts';
import type { BenchServer } from '../../bench/lib/setup.ts';
import { queryStore, request, requireRoute, scenario, startServer, tally } from './harness.ts';

interface Sent {
  kind: 'onboard' | 'import';
  id: string;
  status?: number;
  body?: Record<string, unknown>;
  error?: string;
}

/** Runs `jobs` with `concurrency` workers; `onDone` after each. */
async function pool<T>(jobs: (() => Promise<T>)[], concurrency: number, onDone: () => void): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < jobs.length) {
        const job = jobs[next++];
        await job();
        onDone();
      }
    }),
  );
}

/** What a 2xx answer promised but the store does not hold after the restart. */
function lostWrites(dbPath: string, sent: Sent[]): string[] {
  const lost: string[] = [];
  const one = (sql: string, id: string) => queryStore(dbPath, sql, id).length === 1;
  for (const s of sent) {
    if (!s.status || s.status >= 300 || !s.body) continue;
    if (s.kind === 'onboard') {
      const c = s.body.client as { clientId: string; modelId: string; vdmIds: string[]; facadeIds: string[]; experimentIds: string[] };
      const row = queryStore<{ status: string; model_id: string; vdm_ids: string; facade_ids: string }>(dbPath, 'SELECT status, model_id, vdm_ids, facade_ids FROM clients WHERE client_id = ?', c.clientId)[0];
      if (!row || row.status !== 'ACTIVE') lost.push(`client ${c.clientId} answered ${s.status} but is ${row?.status ?? 'absent'}`);
      else if (row.model_id !== c.modelId || row.vdm_ids !== JSON.stringify(c.vdmIds) || row.facade_ids !== JSON.stringify(c.facadeIds)) {
        lost.push(`client ${c.clientId}: store ${JSON.stringify(row)} differs from the answer ${JSON.stringify(c)}`);
      }
      for (const v of c.vdmIds) if (!one('SELECT 1 FROM vdms WHERE vdm_id = ?', v)) lost.push(`client ${c.clientId}: VDM ${v} missing`);
      for (const e of c.experimentIds) if (!one('SELECT 1 FROM experiments WHERE experiment_id = ?', e)) lost.push(`client ${c.clientId}: experiment ${e} missing`);
    } else {
      const facadeId = s.body.facadeId as string;
      if (!one('SELECT 1 FROM facades WHERE facade_id = ?', facadeId)) lost.push(`dashboard ${s.id} answered ${s.status} with ${facadeId}, which is missing`);
      for (const e of (s.body.experiments as { experimentId: string }[]) ?? []) {
        if (!one('SELECT 1 FROM experiments WHERE experiment_id = ?', e.experimentId)) lost.push(`dashboard ${s.id}: experiment ${e.experimentId} missing`);
      }
    }
  }
  return lost;
}

/** IDs that two different 2xx answers both claim. */
function duplicateIds(sent: Sent[]): string[] {
  const seen = new Map<string, string>();
  const dups: string[] = [];
  const claim = (id: string, by: string) => {
    const other = seen.get(id);
    if (other && other !== by) dups.push(`${id} answered to ${other} and ${by}`);
    seen.set(id, by);
  };
  for (const s of sent) {
    if (!s.status || s.status >= 300 || !s.body) continue;
    if (s.kind === 'onboard') {
      const c = s.body.client as { modelId: string; vdmIds: string[]; facadeIds: string[]; experimentIds: string[] };
      for (const id of [c.modelId, ...c.vdmIds, ...c.facadeIds, ...c.experimentIds]) claim(id, s.id);
    } else {
      claim(s.body.facadeId as string, s.id);
      for (const e of (s.body.experiments as { experimentId: string }[]) ?? []) claim(e.experimentId, s.id);
    }
  }
  return dups;
}

/**
 * `total` onboardings and imports from 6 workers, the server killed with `kill -9` once
 * `killAfter` were answered, then started again (its first sync done). Returns what was sent
 * and how it was answered; every answer before the kill was a 2xx.
 */
async function burstKillRestart(ctx: BenchServer, total: number, killAfter: number): Promise<Sent[]> {
  const base = ctx.server.url;
  const sent: Sent[] = [];
  const jobs: (() => Promise<void>)[] = [];
  for (let i = 0; i < total; i++) {
    const kind = i % 3 === 0 ? 'onboard' : 'import';
    const id = kind === 'onboard' ? `CRASH${String(i).padStart(3, '0')}` : `crash-dash-${i}`;
    const entry: Sent = { kind, id };
    sent.push(entry);
    jobs.push(async () => {
      try {
        const res =
          kind === 'onboard'
            ? await request(`${base}/v1/sdk/client/onboard`, { body: onboardingPackage(id), headers: ctx.keyHeaders })
            : await request(`${base}/v1/sdk/import`, { body: dashboardPayload(id), headers: ctx.keyHeaders });
        entry.status = res.status;
        entry.body = res.json as Record<string, unknown>;
      } catch (err) {
        entry.error = (err as Error).message;
      }
    });
  }
  let done = 0;
  let killed: Promise<void> | undefined;
  await pool(jobs, 6, () => {
    if (++done === killAfter) killed = ctx.server.kill9();
  });
  await killed;
  expect(sent.some((x) => x.error)).toBe(true); // the kill really was mid-burst
  for (const x of sent.filter((y) => y.status && y.status >= 300)) throw new Error(`${x.kind} ${x.id} answered ${x.status} ${JSON.stringify(x.body)}`);

  const from = ctx.server.log.length;
  await ctx.server.start();
  await ctx.server.waitReady();
  await ctx.server.waitForLog(/first sync done/, 60_000, from);
  return sent;
}

/** What every answered write must have left in the store after the restart. */
function expectNothingLost(ctx: BenchServer, sent: Sent[]): void {
  const lost = lostWrites(ctx.server.opts.dbPath, sent);
  tally.lostWrites += lost.length;
  expect(lost).toEqual([]);
  expect(duplicateIds(sent)).toEqual([]);
  expect(storeInvariants(ctx.server.opts.dbPath)).toEqual([]);
}

export function crashScenarios(): void {
  describe('crash', () => {
    scenario('kill -9 mid-burst of onboardings and imports, restart: every 2xx present and complete', async (s) => {
      const ctx = await startServer('crash');
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/client/onboard', ctx.keyHeaders, 'issue 4');
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const sent = await burstKillRestart(ctx, 60, 20);
        const answered = sent.filter((x) => x.status && x.status < 300);
        expect(answered.length).toBeGreaterThanOrEqual(15);
        expectNothingLost(ctx, sent);
        const files = await new ManifestFiles(ctx.server.opts.manifestsDir).list();
        expect(folderStoreAgreement(ctx.server.opts.dbPath, ctx.server.opts.manifestsDir, files)).toEqual([]);
        // Every answered onboarding and import has its manifest file.
        for (const x of answered) {
          if (x.kind === 'onboard') expect(files).toContain(`clients/${x.id}.yaml`);
          else expect(files.some((f) => f.startsWith('dashboards/') && f.includes(x.id))).toBe(true);
        }
      } finally {
        await ctx.close();
      }
    });

    scenario('git mode: kill -9 mid-burst, restart: every 2xx is its own commit in the remote and complete in the store', async (s) => {
      const ctx = await startServer('crash-git', { mode: 'git' });
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/client/onboard', ctx.keyHeaders, 'issue 4');
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const sent = await burstKillRestart(ctx, 45, 15);
        const answered = sent.filter((x) => x.status && x.status < 300);
        expect(answered.length).toBeGreaterThanOrEqual(10);
        expectNothingLost(ctx, sent);
        // Acknowledged only once pushed: each answered write is a commit of its own on the remote.
        const bare = ctx.bare ?? '';
        const subjects = gitLog(bare, '%s');
        const tree = git(bare, 'ls-tree', '-r', '--name-only', 'main').split('\n');
        for (const x of answered) {
          const subject = x.kind === 'onboard' ? `onboard client ${x.id}` : `import dashboard ${x.id}`;
          expect(subjects.filter((l) => l === subject)).toHaveLength(1);
          if (x.kind === 'onboard') expect(tree).toContain(`clients/${x.id}.yaml`);
          else expect(tree.some((f) => f.startsWith('dashboards/') && f.includes(x.id))).toBe(true);
        }
      } finally {
        await ctx.close();
      }
    });
  });
}
