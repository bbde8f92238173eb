import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect } from 'vitest';
import { hashPassword } from '../../controller/auth/passwords.ts';
import { createApiKey, login, routeExists } from '../../bench/lib/api-client.ts';
import { git, gitLog } from '../../bench/lib/git.ts';
import { dashboardPayload, onboardingPackage, pipelinePayload } from '../../bench/lib/payloads.ts';
import type { BenchServer } from '../../bench/lib/setup.ts';
import { storeInvariants } from './checks.ts';
import { dumpFolder, errorText, postLarge, queryStore, request, requireRoute, scenario, startServer, until } from './harness.ts';

const TRAVERSALS = ['../../../../tmp/evil', '..', '../x', '/etc/passwd', 'a/../../b', '..\\..\\win', 'x\u0000y', '.hidden', './.git/config', '%2e%2e%2fup', '....//....//x', 'CON', ' '];

/** Every file under `dir` that is not under one of `inside`. */
function filesOutside(dir: string, inside: string[]): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const abs = join(d, name);
      if (inside.some((i) => abs === i || abs.startsWith(`${i}/`))) continue;
      if (statSync(abs).isDirectory()) walk(abs);
      else out.push(relative(dir, abs));
    }
  };
  walk(dir);
  return out.sort();
}

/** Every byte the server keeps: its log, the store files, and (git mode) every git object. */
function everythingKept(ctx: BenchServer): string {
  const parts = [ctx.server.log];
  const dataDir = dirname(ctx.server.opts.dbPath);
  for (const f of readdirSync(dataDir, { recursive: true }) as string[]) {
    const abs = join(dataDir, f);
    if (statSync(abs).isFile()) parts.push(readFileSync(abs).toString('latin1'));
  }
  if (ctx.bare) parts.push(git(ctx.bare, 'log', '--all', '-p', '--format=fuller'));
  return parts.join('\n');
}

export function securityScenarios(): void {
  describe('security', () => {
    scenario('path traversal through every name that reaches the file system stays inside the manifests folder', async (s) => {
      const ctx = await startServer('traversal');
      try {
        const root = ctx.server.opts.manifestsDir;
        const before = filesOutside(ctx.dir, [root, dirname(ctx.server.opts.dbPath)]);
        const doors: [string, (name: string) => unknown][] = [];
        if (await routeExists(ctx.server.url, 'POST', '/v1/sdk/import', ctx.keyHeaders)) doors.push(['/v1/sdk/import', (n) => dashboardPayload(n)]);
        if (await routeExists(ctx.server.url, 'POST', '/v1/sdk/import-pipeline', ctx.keyHeaders)) doors.push(['/v1/sdk/import-pipeline', (n) => pipelinePayload(n)]);
        if (await routeExists(ctx.server.url, 'POST', '/v1/sdk/client/onboard', ctx.keyHeaders)) doors.push(['/v1/sdk/client/onboard', (n) => onboardingPackage(n)]);
        const answers: string[] = [];
        for (const [path, payload] of doors) {
          for (const name of TRAVERSALS) {
            const res = await request(`${ctx.server.url}${path}`, { body: payload(name), headers: ctx.keyHeaders });
            expect(res.status, `${path} ${JSON.stringify(name)}: ${res.text}`).toBeLessThan(500);
            if (res.status >= 400) expect(errorText(res), res.text).toBeTruthy();
            answers.push(`${path} ${JSON.stringify(name)} → ${res.status}`);
          }
        }
        // metadata.name in a hand-written manifest reaches the status table, never a path.
        for (const [i, name] of TRAVERSALS.entries()) {
          writeFileSync(join(root, `trav-${i}.yaml`), `apiVersion: bi.controller/v1\nkind: Dashboard\nmetadata:\n  name: ${JSON.stringify(name)}\nspec: ${JSON.stringify(dashboardPayload('t'))}\n`);
        }
        await until(() => queryStore(ctx.server.opts.dbPath, `SELECT 1 FROM manifests WHERE path LIKE 'trav-%'`).length === TRAVERSALS.length, 15_000, 'the traversal manifests to be read');
        expect(filesOutside(ctx.dir, [root, dirname(ctx.server.opts.dbPath)])).toEqual(before);
        // Whatever was accepted landed in the kind's own folder under a safe file name.
        for (const f of Object.keys(dumpFolder(root))) expect(f, f).toMatch(/^(?:[a-z-]+\/)?[A-Za-z0-9._-]+$/);
        expect(ctx.server.running).toBe(true);
        if (!doors.length) s.skip('no API write endpoint in this build yet (issues 4, 5, 6); only manifest names were tried');
      } finally {
        await ctx.close();
      }
    });

    scenario('YAML alias bombs and deep nesting: rejected, the server keeps answering', async () => {
      const ctx = await startServer('bombs');
      try {
        const root = ctx.server.opts.manifestsDir;
        const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
        for (let i = 1; i < 10; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
        const bomb = `apiVersion: bi.controller/v1\nkind: Dashboard\nmetadata: {name: bomb}\n${levels.join('\n')}\nspec: {name: x, dataSource: {dbId: D2026A00001}, charts: *j}\n`;
        writeFileSync(join(root, 'bomb.yaml'), bomb);
        writeFileSync(join(root, 'nest.yaml'), `apiVersion: bi.controller/v1\nkind: Dashboard\nmetadata: {name: nest}\nspec: ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`);
        const rows = await until(
          () => {
            const r = queryStore<{ path: string; phase: string; message: string }>(ctx.server.opts.dbPath, `SELECT path, phase, message FROM manifests WHERE path IN ('bomb.yaml', 'nest.yaml') ORDER BY path`);
            return r.length === 2 ? r : undefined;
          },
          20_000,
          'the bombs to be read',
        );
        expect(rows.map((r) => [r.path, r.phase])).toEqual([
          ['bomb.yaml', 'Invalid'],
          ['nest.yaml', 'Invalid'],
        ]);
        const health = await request(`${ctx.server.url}/healthz`);
        expect(health.status).toBe(200);
        expect(health.ms).toBeLessThan(1000);
        expect(ctx.server.peakRssMb() ?? 0).toBeLessThan(500);
      } finally {
        await ctx.close();
      }
    });

    scenario('10 MB bodies: 413 with a JSON error on every POST endpoint', async () => {
      const ctx = await startServer('bigbody');
      try {
        const paths = ['/v1/auth/login', `/v1/api-keys/${ctx.session.userId}`, '/v1/sdk/client/onboard', '/v1/sdk/import', '/v1/sdk/import-pipeline', `/v1/sdk/import/${ctx.session.userId}`, '/v1/reconciler/sync', '/v1/reconciler/webhook'];
        for (const p of paths) {
          const res = await postLarge(`${ctx.server.url}${p}`, 10 * 1024 * 1024, { ...ctx.keyHeaders, ...ctx.session.headers });
          expect(res.status, `${p}: ${res.text.slice(0, 200)}`).toBe(413);
          expect(errorText(res), p).toBeTruthy();
        }
        expect(ctx.server.running).toBe(true);
      } finally {
        await ctx.close();
      }
    });

    scenario('a revoked API key is refused at once', async (s) => {
      const ctx = await startServer('revoke');
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const key = await createApiKey(ctx.server.url, ctx.session, 'to revoke');
        const headers = { authorization: `Bearer ${key.apiKey}` };
        expect((await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('before-revoke'), headers })).status).toBe(201);
        const del = await request(`${ctx.server.url}/v1/api-keys/${ctx.session.userId}/${key.keyId}`, { method: 'DELETE', headers: ctx.session.headers });
        expect(del.json).toEqual({ success: true, keyId: key.keyId, revoked: true });
        const after = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('after-revoke'), headers });
        expect([after.status, after.json]).toEqual([401, { error: 'Invalid API key' }]);
        const viaHeader = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('after-revoke'), headers: { 'x-api-key': key.apiKey } });
        expect(viaHeader.status).toBe(401);
        expect(queryStore(ctx.server.opts.dbPath, `SELECT 1 FROM facades WHERE name = 'after-revoke'`)).toEqual([]);
      } finally {
        await ctx.close();
      }
    });

    scenario('header injection in git commit authors: a username with a newline makes one clean author line', async (s) => {
      const ctx = await startServer('author', { mode: 'git' });
      try {
        await requireRoute(s, ctx, 'POST', '/v1/sdk/import', ctx.keyHeaders, 'issue 5');
        const username = 'mallory\ncommitter Evil <evil@example.com> 0 +0000\nencoding evil';
        const password = 'injected-user-password-1';
        // The API and the CLI may refuse such a name, so it goes into the store directly.
        await ctx.server.stop();
        const db = new Database(ctx.server.opts.dbPath);
        const at = new Date().toISOString();
        db.prepare(`INSERT INTO users (user_id, username, password_hash, role, created_at, updated_at) VALUES ('U2026A09999', ?, ?, 'admin', ?, ?)`).run(username, await hashPassword(password), at, at);
        db.close();
        await ctx.server.start();
        await ctx.server.waitReady();
        const session = await login(ctx.server.url, username, password);
        const key = await createApiKey(ctx.server.url, session, 'mallory');
        const before = gitLog(ctx.bare ?? '').length;
        const res = await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('injected'), headers: { authorization: `Bearer ${key.apiKey}` } });
        expect(res.status, res.text).toBeLessThan(500);
        const commits = await until(() => (gitLog(ctx.bare ?? '', '%H').length > before ? gitLog(ctx.bare ?? '', '%H') : undefined), 10_000, 'a commit').catch(() => undefined);
        if (!commits) return s.skip('the API write made no commit: git mode is not in this build (issue 7 not merged)');
        const raw = git(ctx.bare ?? '', 'cat-file', '-p', commits[0]);
        const headers = raw.split('\n\n')[0].split('\n').map((l) => l.split(' ')[0]);
        expect(headers.filter((h) => h === 'author')).toHaveLength(1);
        expect(headers.filter((h) => h === 'committer')).toHaveLength(1);
        expect(headers.every((h) => ['tree', 'parent', 'author', 'committer'].includes(h)), raw).toBe(true);
        expect(raw).not.toContain('evil@example.com>');
      } finally {
        await ctx.close();
      }
    });

    scenario('no plaintext secret (API keys, passwords, session tokens) in logs, store or git', async () => {
      for (const mode of ['directory', 'git'] as const) {
        const ctx = await startServer(`secrets-${mode}`, { mode, env: { BI_LOG_LEVEL: 'debug' } });
        try {
          const secrets = [ctx.server.opts.adminPassword, ctx.apiKey, ctx.session.csrfToken, ...ctx.session.cookie.split('; ').map((c) => c.split('=')[1])];
          // Use the secrets the way clients do, including failed attempts.
          await request(`${ctx.server.url}/v1/auth/login`, { body: { username: ctx.server.opts.adminUser, password: `${ctx.server.opts.adminPassword}-wrong` } });
          await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('secret-check'), headers: ctx.keyHeaders });
          await request(`${ctx.server.url}/v1/sdk/import`, { body: dashboardPayload('secret-check'), headers: { 'x-api-key': ctx.apiKey } });
          await request(`${ctx.server.url}/v1/sdk/import?key=${ctx.apiKey.slice(0, 20)}`, { body: {}, headers: ctx.keyHeaders });
          secrets.push(`${ctx.server.opts.adminPassword}-wrong`);
          await ctx.server.stop();
          const kept = everythingKept(ctx);
          for (const secret of secrets.filter((x) => x && x.length >= 16)) {
            expect(kept.includes(secret), `a secret (${secret.slice(0, 6)}…) is kept in plain text (${mode} mode)`).toBe(false);
          }
          expect(storeInvariants(ctx.server.opts.dbPath)).toEqual([]);
        } finally {
          await ctx.close();
        }
      }
    });
  });
}

