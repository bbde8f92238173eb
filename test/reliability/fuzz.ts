import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { stringify } from 'yaml';
import { routeExists } from '../../bench/lib/api-client.ts';
import { clientManifest, connectionManifest, coreModelManifest, dashboardPayload, manifest, onboardingPackage, pipelinePayload } from '../../bench/lib/payloads.ts';
import type { BenchServer } from '../../bench/lib/setup.ts';
import { storeInvariants } from './checks.ts';
import { dumpFolder, dumpStore, errorText, queryStore, request, scenario, startServer, tally, until } from './harness.ts';
import { fuzzCase, keysOf, mutatedPayload, type FuzzCase, type Json } from './mutations.ts';

const RUNS = Number(process.env.REL_FUZZ_RUNS ?? 80);

interface Endpoint {
  path: (ctx: BenchServer) => string;
  auth: 'key' | 'session' | 'none';
  valid: Json;
  issue: string;
}

const ENDPOINTS: Record<string, Endpoint> = {
  'POST /v1/auth/login': { path: () => '/v1/auth/login', auth: 'none', valid: { username: 'bench-admin', password: 'wrong-password' }, issue: 'issue 3' },
  'POST /v1/api-keys/{userId}': { path: (c) => `/v1/api-keys/${c.session.userId}`, auth: 'session', valid: { label: 'fuzz', expiresAt: '2099-01-01T00:00:00Z', clientId: 'ACME' }, issue: 'issue 3' },
  'POST /v1/sdk/client/onboard': { path: () => '/v1/sdk/client/onboard', auth: 'key', valid: onboardingPackage('FUZZA') as Json, issue: 'issue 4' },
  'POST /v1/sdk/client/onboard/{userId}': { path: (c) => `/v1/sdk/client/onboard/${c.session.userId}`, auth: 'session', valid: onboardingPackage('FUZZS') as Json, issue: 'issue 4' },
  'POST /v1/sdk/import': { path: () => '/v1/sdk/import', auth: 'key', valid: dashboardPayload('fuzz-a') as Json, issue: 'issue 5' },
  'POST /v1/sdk/import/{userId}': { path: (c) => `/v1/sdk/import/${c.session.userId}`, auth: 'session', valid: dashboardPayload('fuzz-s') as Json, issue: 'issue 5' },
  'POST /v1/sdk/import-pipeline': { path: () => '/v1/sdk/import-pipeline', auth: 'key', valid: pipelinePayload('fuzz-a') as Json, issue: 'issue 6' },
  'POST /v1/sdk/import-pipeline/{userId}': { path: (c) => `/v1/sdk/import-pipeline/${c.session.userId}`, auth: 'session', valid: pipelinePayload('fuzz-s') as Json, issue: 'issue 6' },
  'POST /v1/reconciler/sync': { path: () => '/v1/reconciler/sync', auth: 'session', valid: { allowMassPrune: false }, issue: 'issue 7' },
  'POST /v1/reconciler/webhook': { path: () => '/v1/reconciler/webhook', auth: 'none', valid: { ref: 'refs/heads/main', after: '0'.repeat(40) }, issue: 'issue 7' },
};

function headersFor(ctx: BenchServer, auth: Endpoint['auth'], contentType: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': contentType };
  if (auth === 'key') Object.assign(h, ctx.keyHeaders);
  if (auth === 'session') Object.assign(h, ctx.session.headers);
  return h;
}

/** What is wrong with one answer to a bad input (empty when all is well). */
function judge(c: FuzzCase, valid: Json, res: { status: number; json: unknown; text: string }): string[] {
  const wrong: string[] = [];
  if (res.status >= 500) wrong.push(`answered ${res.status}`);
  if (res.json === undefined || typeof res.json !== 'object' || res.json === null) wrong.push(`answer is not a JSON object: ${res.text.slice(0, 120)}`);
  if (res.status >= 400) {
    const text = errorText(res);
    if (!text) wrong.push(`error answer without an error text: ${res.text.slice(0, 120)}`);
    else if (res.status === 400 && c.json && typeof c.json === 'object' && !Array.isArray(c.json)) {
      // A validation error names the field it is about.
      // Case-insensitive: docs/contract/api.md §7's own sentence says `VDM` for the field `vdm`.
      const fields = [...keysOf(valid), ...keysOf(c.json), 'body'].map((k) => k.toLowerCase());
      if (!fields.some((k) => text.toLowerCase().includes(k))) wrong.push(`validation error names no field: ${text.slice(0, 160)}`);
    }
  }
  return wrong;
}

export function fuzzScenarios(): void {
  describe('bad input fuzzing', () => {
    let ctx: BenchServer;
    beforeAll(async () => {
      ctx = await startServer('fuzz');
    });
    afterAll(async () => {
      await ctx?.close();
    });

    for (const [name, ep] of Object.entries(ENDPOINTS)) {
      scenario(`fuzz ${name}: never a 5xx, a JSON error with a field, the store unchanged`, async (s) => {
        const path = ep.path(ctx);
        if (!(await routeExists(ctx.server.url, 'POST', path, headersFor(ctx, ep.auth, 'application/json')))) s.skip(`${name} is not in this build (${ep.issue} not merged)`);
        const db = ctx.server.opts.dbPath;
        const folder = ctx.server.opts.manifestsDir;
        let store = dumpStore(db);
        let files = dumpFolder(folder);
        const failures: string[] = [];
        let cases = 0;
        await fc.assert(
          fc.asyncProperty(fuzzCase(ep.valid), async (c) => {
            cases++;
            const res = await request(`${ctx.server.url}${path}`, { method: 'POST', rawBody: c.raw, headers: headersFor(ctx, ep.auth, c.contentType) });
            const wrong = judge(c, ep.valid, res);
            const unchangedExpected = res.status >= 400 || (res.json as { status?: string } | undefined)?.status === 'ALREADY_EXISTS';
            if (unchangedExpected) {
              const now = dumpStore(db);
              for (const t of Object.keys(store)) if (JSON.stringify(now[t]) !== JSON.stringify(store[t])) wrong.push(`table ${t} changed on a ${res.status}`);
              if (JSON.stringify(dumpFolder(folder)) !== JSON.stringify(files)) wrong.push(`manifests folder changed on a ${res.status}`);
            }
            store = dumpStore(db);
            files = dumpFolder(folder);
            if (wrong.length) failures.push(`${c.label} → ${res.status}: ${wrong.join('; ')}`);
            return true;
          }),
          { numRuns: RUNS, seed: Number(process.env.REL_FUZZ_SEED ?? 20261121) },
        );
        tally.fuzzCases += cases;
        expect(failures.slice(0, 10)).toEqual([]);
        expect((await request(`${ctx.server.url}/healthz`)).status).toBe(200);
        expect(ctx.server.running).toBe(true);
        expect(storeInvariants(db)).toEqual([]);
      });
    }

    scenario('fuzz broken manifest files: Invalid or Failed, never a crash, resources unchanged', async () => {
      const db = ctx.server.opts.dbPath;
      const root = ctx.server.opts.manifestsDir;
      mkdirSync(join(root, 'fuzz'), { recursive: true });
      const bases = [clientManifest('FUZZFILE'), manifest('Dashboard', 'fuzz-file', dashboardPayload('fuzz file')), manifest('Pipeline', 'fuzz-file', pipelinePayload('fuzz file')), connectionManifest(), coreModelManifest()];
      const textCase = fc.oneof(
        fc.tuple(fc.constantFrom(...bases), fc.integer({ min: 0, max: 4000 })).map(([m, n]) => stringify(m).slice(0, n)),
        fc.tuple(fc.constantFrom(...bases), fc.integer({ min: 0, max: 4000 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 6 })).map(([m, n, s]) => {
          const t = stringify(m);
          return t.slice(0, n) + s + t.slice(n);
        }),
        fc.constantFrom(...bases).chain((m) => mutatedPayload(m as unknown as Json)).map((c) => (c.json === undefined ? c.raw : stringify(c.json))),
        fc.constantFrom(
          '',
          '---\n---\n',
          'a: &a [x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n',
          `apiVersion: bi.controller/v1\nkind: Client\nmetadata: {name: "../../escape"}\nspec: {}\n`,
          `apiVersion: bi.controller/v1\nkind: Secret\nmetadata: {name: x}\nspec: {}\n`,
          `{"apiVersion":"bi.controller/v1","kind":"Dashboard","metadata":{"name":"x"},"spec":`,
          '\uFEFF\u0000\u0001binary',
          `apiVersion: bi.controller/v1\nkind: Client\nmetadata:\n  name: dup\n  name: dup2\nspec: {clientId: A}\n`,
          `x: ${'['.repeat(10_000)}`,
          'x'.repeat(2 * 1024 * 1024),
        ),
      );
      let store = dumpStore(db);
      const failures: string[] = [];
      let n = 0;
      await fc.assert(
        fc.asyncProperty(textCase, async (text) => {
          const rel = `fuzz/case-${n++}.yaml`;
          writeFileSync(join(root, rel), text);
          const row = await until(
            () => queryStore<{ phase: string; key: string; message: string }>(db, `SELECT phase, key, message FROM manifests WHERE path = ? AND phase != 'Pending'`, rel)[0],
            15_000,
            `a status for ${rel}`,
          ).catch((err: Error) => {
            failures.push(`${rel}: ${err.message}`);
            return undefined;
          });
          if (row && row.phase !== 'Synced') {
            const now = dumpStore(db);
            for (const t of Object.keys(store)) if (JSON.stringify(now[t]) !== JSON.stringify(store[t])) failures.push(`${rel} (${row.phase}): table ${t} changed`);
          }
          store = dumpStore(db);
          if (!ctx.server.running) failures.push(`${rel}: the server died`);
          return true;
        }),
        { numRuns: Math.max(20, Math.round(RUNS / 2)), seed: Number(process.env.REL_FUZZ_SEED ?? 20261121) },
      );
      tally.fuzzCases += n;
      expect(failures.slice(0, 10)).toEqual([]);
      expect((await request(`${ctx.server.url}/healthz`)).status).toBe(200);
      expect(storeInvariants(db)).toEqual([]);
    });
  });
}
