import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { dashboardPayload } from '../../bench/lib/payloads.ts';
import type { BenchServer } from '../../bench/lib/setup.ts';
import { storeInvariants } from './checks.ts';
import { dumpFolder, dumpStore, errorText, queryStore, request, requireRoute, scenario, startServer, type ScenarioContext } from './harness.ts';

const isRoot = process.getuid?.() === 0;

/** Makes folders unwritable, even for root (chattr +i); returns the undo, or a reason it cannot. */
function makeReadOnly(dirs: string[]): (() => void) | string {
  if (!isRoot) {
    for (const d of dirs) chmodSync(d, 0o555);
    return () => dirs.forEach((d) => chmodSync(d, 0o755));
  }
  try {
    execFileSync('chattr', ['+i', ...dirs], { stdio: 'pipe' });
    return () => execFileSync('chattr', ['-i', ...dirs], { stdio: 'pipe' });
  } catch (err) {
    return `running as root and chattr +i is not available here: ${(err as Error).message.split('\n')[0]}`;
  }
}

/** An import that must fail cleanly: a JSON error, not a 500, store and folder unchanged. */
async function expectCleanFailure(ctx: BenchServer, name: string): Promise<{ status: number; error: string }> {
  const store = dumpStore(ctx.server.opts.dbPath);
  const files = dumpFolder(ctx.server.opts.manifestsDir);
  const res = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload(name), headers: ctx.keyHeaders });
  expect(res.status, res.text).toBeGreaterThanOrEqual(400);
  expect(res.status, `a fault must not be an anonymous 500: ${res.text}`).not.toBe(500);
  const error = errorText(res);
  expect(error, res.text).toBeTruthy();
  expect(dumpStore(ctx.server.opts.dbPath)).toEqual(store);
  expect(dumpFolder(ctx.server.opts.manifestsDir)).toEqual(files);
  return { status: res.status, error: error ?? '' };
}

async function withImportServer(s: ScenarioContext, prefix: string, fn: (ctx: BenchServer) => Promise<void>): Promise<void> {
  const ctx = await startServer(prefix);
  try {
    await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
    const warm = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload(`${prefix}-warm`), headers: ctx.keyHeaders });
    expect(warm.status, warm.text).toBe(201);
    await fn(ctx);
    expect(ctx.server.running).toBe(true);
    expect(storeInvariants(ctx.server.opts.dbPath)).toEqual([]);
  } finally {
    await ctx.close();
  }
}

export function faultScenarios(): void {
  describe('disk and store faults', () => {
    scenario('read-only manifests folder: a clear 503-style error, store unchanged, works again after', async (s) => {
      await withImportServer(s, 'readonly', async (ctx) => {
        const root = ctx.server.opts.manifestsDir;
        mkdirSync(join(root, 'dashboards'), { recursive: true });
        const dirs = [root, ...readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => join(root, e.name))];
        const undo = makeReadOnly(dirs);
        if (typeof undo === 'string') return s.skip(undo);
        let failure;
        try {
          failure = await expectCleanFailure(ctx, 'readonly-1');
        } finally {
          undo();
        }
        expect(failure.status).toBe(503);
        expect(failure.error).toMatch(/dashboards|write|read-only|permission|EPERM|EACCES|EROFS/i);
        const again = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('readonly-1'), headers: ctx.keyHeaders });
        expect(again.status, again.text).toBe(201);
      });
    });

    scenario('full disk (a failing write: file-size limit on the server process): clear error, no corruption', async (s) => {
      await withImportServer(s, 'fulldisk', async (ctx) => {
        const pid = String(ctx.server.pid);
        try {
          // Soft limit only: writes past 256 bytes fail with EFBIG (Node ignores SIGXFSZ), like ENOSPC.
          execFileSync('prlimit', ['--pid', pid, '--fsize=256:unlimited'], { stdio: 'pipe' });
        } catch (err) {
          s.skip(`prlimit is not available: ${(err as Error).message.split('\n')[0]}`);
        }
        let failure;
        let key;
        try {
          failure = await expectCleanFailure(ctx, 'fulldisk-1');
          // A write to SQLite alone (key creation): 503, never a 500.
          key = await request(`${ctx.server.url}/v1/api-keys/${ctx.session.userId}`, { body: { label: 'fulldisk' }, headers: ctx.session.headers });
        } finally {
          execFileSync('prlimit', ['--pid', pid, '--fsize=unlimited:unlimited'], { stdio: 'pipe' });
        }
        expect(failure.status).toBe(503);
        expect(key.status, key.text).toBe(503);
        expect(errorText(key)).toMatch(/^The store cannot take writes now \(/);
        const again = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('fulldisk-1'), headers: ctx.keyHeaders });
        expect(again.status, again.text).toBe(201);
        const integrity = queryStore<{ integrity_check: string }>(ctx.server.opts.dbPath, 'PRAGMA integrity_check');
        expect(integrity).toEqual([{ integrity_check: 'ok' }]);
      });
    });

    scenario('locked DB (another connection holds the write lock): 503, the write withdrawn, the retry applies it once', async (s) => {
      await withImportServer(s, 'locked', async (ctx) => {
        const locker = new Database(ctx.server.opts.dbPath);
        locker.pragma('busy_timeout = 0');
        locker.exec('BEGIN IMMEDIATE');
        let res;
        try {
          res = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('locked-1'), headers: ctx.keyHeaders });
        } finally {
          locker.exec('ROLLBACK');
          locker.close();
        }
        // The server waited out its busy timeout, then said so: 503, the reason, and that it retries.
        expect(res.status, res.text).toBe(503);
        expect(errorText(res)).toMatch(/locked|busy/i);
        // 503 means not done: the manifest was withdrawn before the answer, so a sync applies
        // nothing, and the client's retry is the one write (no duplicate).
        expect(readdirSync(join(ctx.server.opts.manifestsDir, 'dashboards')).filter((f) => f.includes('locked-1'))).toEqual([]);
        const sync = await request(`${ctx.server.url}/v1/reconciler/sync`, { body: {}, headers: ctx.session.headers });
        expect(sync.status, sync.text).toBe(200);
        expect(queryStore(ctx.server.opts.dbPath, `SELECT 1 FROM facades WHERE name = 'locked-1'`)).toEqual([]);
        const retry = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('locked-1'), headers: ctx.keyHeaders });
        expect(retry.status, retry.text).toBe(201);
        expect(queryStore(ctx.server.opts.dbPath, `SELECT 1 FROM facades WHERE name = 'locked-1'`)).toHaveLength(1);
        expect(queryStore(ctx.server.opts.dbPath, `SELECT phase FROM manifests WHERE key LIKE 'Dashboard/locked-1%'`)).toEqual([{ phase: 'Synced' }]);
        expect(queryStore(ctx.server.opts.dbPath, 'PRAGMA integrity_check')).toEqual([{ integrity_check: 'ok' }]);
      });
    });
  });
}
