import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestUser, createUserWithKey, loginAs, type TestKey, type TestSession } from '../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../helpers/runtime.ts';
import { waitFor } from '../helpers/wait.ts';
import { FakeEngine } from '../helpers/fake-engine.ts';
import { clientManifest, onboardingPackage, packageWithDashboard, writeCoreModel } from '../controller/kinds/client/fixtures.ts';

/**
 * Every route × every kind of caller × own / other / shared / unknown objects, with the status
 * and body each must answer (docs/contract/design.md, "Tenancy and authorization"). A route registered
 * without an entry here fails the first test.
 *
 * Tenants: ACME (connection D…01, the confined callers' client) and GLOBEX (D…02); D…03 is a
 * shared platform warehouse.
 */

const P = ['adminSession', 'adminKey', 'scopedKey', 'memberSession', 'memberKey', 'disabledSession', 'disabledKey'] as const;
type Principal = (typeof P)[number];
const CONFINED: ReadonlySet<Principal> = new Set(['scopedKey', 'memberSession', 'memberKey']);
const SESSIONS: ReadonlySet<Principal> = new Set(['adminSession', 'memberSession', 'disabledSession']);

const ACME_DB = 'D2026A00001';
const GLOBEX_DB = 'D2026A00002';
const SHARED_DB = 'D2026A00003';
const UNKNOWN_DB = 'D2026A09999';

interface Req {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  url: string;
  payload?: unknown;
  /** No credentials at all (public routes whose cookies would change the session). */
  anonymous?: boolean;
}

interface Outcome {
  status: number;
  /** The whole body, when given; else `check` looks at what matters. */
  body?: unknown;
  check?: (json: Record<string, unknown>) => void;
}

interface Case {
  req: (c: Caller) => Req;
  expect: (p: Principal, c: Caller) => Outcome;
}

type Auth = 'public' | 'A' | 'S' | 'S-admin';

interface RouteEntry {
  auth: Auth;
  /** Server-sent events: a passing caller gets a 200 stream (read over a real socket). */
  stream?: boolean;
  cases: Record<string, Case>;
}

interface Caller {
  principal: Principal;
  userId: string;
  headers: Record<string, string>;
}

let t: TestApp;
const callers = new Map<Principal, Caller>();
const ids = { acmeVdm: '', globexVdm: '', acmeFacade: '', globexFacade: '', acmePipeline: '', globexPipeline: '', mixedPipeline: '', otherUser: '', mia: '' };
/** Users made to be deleted, one per DELETE request (every caller's request takes one). */
const victims: string[] = [];

/** A 400 also carries `code` and the `problems` (api/errors.ts); their paths are checked in test/api/edge-validation.test.ts. */
const invalid = (status: number) => (status === 400 ? { code: 'validation', problems: expect.any(Array) } : {});
const err = (status: number, error: string): Outcome => ({ status, body: { success: false, error, ...invalid(status) } });
const msg = (status: number, message: string): Outcome => ({ status, body: { success: false, message, ...invalid(status) } });
const ok = (status: number, check?: (json: Record<string, unknown>) => void): Outcome => ({ status, check: (j) => { expect(j.success).toBe(true); check?.(j); } });
const same = (o: Outcome) => () => o;
/** Unconfined callers get `all`, callers confined to ACME get `confined`. */
const byScope = (all: Outcome, confined: Outcome) => (p: Principal) => (CONFINED.has(p) ? confined : all);

const dashboard = (dbId: string, vdmId?: string) => ({
  name: 'Matrix',
  dataSource: { dbId, ...(vdmId ? { vdmId } : {}) },
  charts: [{ title: 'Revenue', type: 'kpi', measures: ['revenue'], dimensions: [] }],
});
const pipeline = (source: string, destination: string) => ({
  name: 'Matrix pipeline',
  source: { connectionId: source, type: 'database' },
  destination: { connectionId: destination },
  steps: [{ type: 'load', config: { tableName: 't' } }],
});

const NO_TENANT = 'dataSource.vdmId must name a VDM of your client when dataSource.dbId is a shared connection';
const ADMIN_ONLY = 'A pipeline must use the connections of one of your clients; other pipelines are for admins only';
const notConnection = (id: string) => `dataSource.dbId ${id} is not an existing connection`;

function dashboardImportCases(url: (c: Caller) => string): Record<string, Case> {
  const post = (payload: unknown) => (c: Caller): Req => ({ method: 'POST', url: `${url(c)}?dryRun=true`, payload });
  return {
    own: { req: (c) => post(dashboard(ACME_DB, ids.acmeVdm))(c), expect: same(ok(200, (j) => expect(j.facadeId).toBe('(new)'))) },
    other: {
      req: (c) => post(dashboard(GLOBEX_DB, ids.globexVdm))(c),
      expect: byScope(ok(200), err(400, `${notConnection(GLOBEX_DB)}; dataSource.vdmId ${ids.globexVdm} is not an existing VDM`)),
    },
    shared: { req: post(dashboard(SHARED_DB)), expect: byScope(ok(200), err(403, NO_TENANT)) },
    sharedWithOwnVdm: { req: (c) => post(dashboard(SHARED_DB, ids.acmeVdm))(c), expect: same(ok(200)) },
    unknown: { req: post(dashboard(UNKNOWN_DB)), expect: same(err(400, notConnection(UNKNOWN_DB))) },
  };
}

function pipelineImportCases(url: (c: Caller) => string): Record<string, Case> {
  const post = (payload: unknown) => (c: Caller): Req => ({ method: 'POST', url: `${url(c)}?dryRun=true`, payload });
  const unknownFor = (id: string) => byScope(ok(200), msg(400, `connectionId ${id} is not an existing connection`));
  return {
    own: { req: post(pipeline(ACME_DB, ACME_DB)), expect: same(ok(200)) },
    ownToShared: { req: post(pipeline(ACME_DB, SHARED_DB)), expect: same(ok(200)) },
    other: { req: post(pipeline(ACME_DB, GLOBEX_DB)), expect: unknownFor(GLOBEX_DB) },
    shared: { req: post(pipeline(SHARED_DB, SHARED_DB)), expect: byScope(ok(200), msg(403, ADMIN_ONLY)) },
    unknown: { req: post(pipeline(UNKNOWN_DB, ACME_DB)), expect: unknownFor(UNKNOWN_DB) },
  };
}

function onboardCases(url: (c: Caller) => string, confinedIsKey: boolean): Record<string, Case> {
  const post = (payload: unknown) => (c: Caller): Req => ({ method: 'POST', url: `${url(c)}?dryRun=true`, payload });
  const scoped = err(403, 'API key is scoped to client ACME');
  const status = (s: string) => ok(200, (j) => expect(j.status).toBe(s));
  return {
    own: { req: post(onboardingPackage('ACME')), expect: same(status('ALREADY_EXISTS')) },
    other: { req: post(onboardingPackage('GLOBEX', { connectionId: GLOBEX_DB })), expect: byScope(status('ALREADY_EXISTS'), scoped) },
    otherConnection: { req: post(onboardingPackage('ACME', { connectionId: GLOBEX_DB })), expect: same(err(409, `Connection ${GLOBEX_DB} belongs to another client`)) },
    otherConnectionNewClient: { req: post(onboardingPackage('NEWCO', { connectionId: ACME_DB })), expect: byScope(err(409, `Connection ${ACME_DB} belongs to another client`), scoped) },
    shared: { req: post(onboardingPackage('NEWCO', { connectionId: SHARED_DB })), expect: byScope(status('DRY_RUN'), confinedIsKey ? scoped : scoped) },
    unknown: { req: post(onboardingPackage('NEWCO', { connectionId: UNKNOWN_DB })), expect: byScope(status('DRY_RUN'), scoped) },
  };
}

function clientReadCases(path: (clientId: string, c: Caller) => string, check: (clientId: string) => (j: Record<string, unknown>) => void, success = true): Record<string, Case> {
  const get = (clientId: string) => (c: Caller): Req => ({ method: 'GET', url: path(clientId, c) });
  const found = (id: string): Outcome => (success ? ok(200, check(id)) : { status: 200, check: check(id) });
  return {
    own: { req: get('ACME'), expect: same(found('ACME')) },
    other: { req: get('GLOBEX'), expect: byScope(found('GLOBEX'), err(404, 'Client GLOBEX not found')) },
    unknown: { req: get('NOPE'), expect: same(err(404, 'Client NOPE not found')) },
  };
}

/** The newest run of a pipeline (started by the start rows, which come first in the table). */
const newestRun = (pipelineId: string): string => t.rt.runs.store.last(pipelineId)?.runId ?? 'RUN-0';
const runActive = (runId: string): boolean => ['queued', 'running'].includes(t.rt.runs.store.get(runId)?.status ?? '');

/** The pipeline-run routes (docs/contract/design.md, "Pipeline runs"), API key and session variants: a run belongs to its pipeline's owner. */
function runRoutes(): Record<string, RouteEntry> {
  const out: Record<string, RouteEntry> = {};
  const notFound = (what: 'Pipeline' | 'Run', id: () => string) => (): Outcome => msg(404, `${what} ${id()} not found`);
  const variants = [
    { auth: 'A' as const, suffix: '', path: (url: string) => () => url },
    { auth: 'S' as const, suffix: '/:userId', path: (url: string) => (c: Caller) => `${url}/${c.userId}` },
  ];
  for (const v of variants) {
    const pipelineCases = (tail: string, allowed: (pipelineId: string) => Outcome): Record<string, Case> => {
      const at = (id: () => string) => (c: Caller): Req => ({ method: tail === '' ? 'POST' : 'GET', url: v.path(`/v1/sdk/pipelines/${id()}/runs`)(c) });
      return {
        own: { req: at(() => ids.acmePipeline), expect: () => allowed(ids.acmePipeline) },
        other: { req: at(() => ids.globexPipeline), expect: (p) => (CONFINED.has(p) ? notFound('Pipeline', () => ids.globexPipeline)() : allowed(ids.globexPipeline)) },
        shared: { req: at(() => ids.mixedPipeline), expect: (p) => (CONFINED.has(p) ? notFound('Pipeline', () => ids.mixedPipeline)() : allowed(ids.mixedPipeline)) },
        unknown: { req: at(() => 'DP-1'), expect: notFound('Pipeline', () => 'DP-1') },
      };
    };
    // Start: the first allowed caller starts a (held) run, every later one meets it: 409.
    const start = (pipelineId: string): Outcome =>
      t.rt.runs.store.active(pipelineId) ? { status: 409, check: (j) => expect(j.success).toBe(false) } : { status: 202, check: (j) => expect((j.run as { status: string }).status).toMatch(/queued|running/) };
    out[`POST /v1/sdk/pipelines/:pipelineId/runs${v.suffix}`] = { auth: v.auth, cases: pipelineCases('', start) };
    out[`GET /v1/sdk/pipelines/:pipelineId/runs${v.suffix}`] = { auth: v.auth, cases: { ...pipelineCases('list', () => ok(200, (j) => expect(Array.isArray(j.runs)).toBe(true))) } };
    for (const [method, tail, allowed] of [
      ['GET', '', () => ok(200, (j) => expect(j.run).toBeDefined())],
      ['GET', '/rejects', () => ok(200, (j) => expect(Array.isArray(j.rejects)).toBe(true))],
      ['GET', '/logs', () => ok(200, (j) => expect(Array.isArray(j.logs)).toBe(true))],
      ['POST', '/cancel', (runId: string) => (runActive(runId) ? { status: 202, check: (j: Record<string, unknown>) => expect(j.success).toBe(true) } : { status: 409, check: (j: Record<string, unknown>) => expect(j.success).toBe(false) })],
    ] as const) {
      const at = (id: () => string) => (c: Caller): Req => ({ method, url: v.path(`/v1/sdk/pipeline-runs/${id()}${tail}`)(c) });
      const acmeRun = () => newestRun(ids.acmePipeline);
      const globexRun = () => newestRun(ids.globexPipeline);
      const mixedRun = () => newestRun(ids.mixedPipeline);
      out[`${method} /v1/sdk/pipeline-runs/:runId${tail}${v.suffix}`] = {
        auth: v.auth,
        cases: {
          own: { req: at(acmeRun), expect: () => allowed(acmeRun()) },
          other: { req: at(globexRun), expect: (p) => (CONFINED.has(p) ? notFound('Run', globexRun)() : allowed(globexRun())) },
          shared: { req: at(mixedRun), expect: (p) => (CONFINED.has(p) ? notFound('Run', mixedRun)() : allowed(mixedRun())) },
          unknown: { req: at(() => 'RUN-1'), expect: notFound('Run', () => 'RUN-1') },
        },
      };
    }
  }
  return out;
}

const none = (req: (c: Caller) => Req, expect: Case['expect']): Record<string, Case> => ({ none: { req, expect } });

/** The table: one entry per registered route. */
function routeTable(): Record<string, RouteEntry> {
  return {
    'GET /healthz': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/healthz' }), same({ status: 200, body: { status: 'ok' } })) },
    'GET /readyz': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/readyz' }), same({ status: 200, body: { status: 'ready', ready: true } })) },
    'POST /v1/auth/login': {
      auth: 'public',
      cases: none(() => ({ method: 'POST', url: '/v1/auth/login', payload: { username: 'nobody', password: 'wrong-password' }, anonymous: true }), same(err(401, 'Invalid username or password'))),
    },
    'POST /v1/auth/refresh': { auth: 'public', cases: none(() => ({ method: 'POST', url: '/v1/auth/refresh', anonymous: true }), same(err(401, 'Session required'))) },
    'POST /v1/auth/logout': { auth: 'public', cases: none(() => ({ method: 'POST', url: '/v1/auth/logout', anonymous: true }), same({ status: 200, body: { success: true } })) },
    'GET /v1/auth/session': {
      auth: 'S',
      cases: none(() => ({ method: 'GET', url: '/v1/auth/session' }), (p) => ok(200, (j) => expect(j.role).toBe(p === 'adminSession' ? 'admin' : 'member'))),
    },
    'POST /v1/api-keys/:userId': {
      auth: 'S',
      cases: {
        own: { req: (c) => ({ method: 'POST', url: `/v1/api-keys/${c.userId}`, payload: { label: 'k', clientId: 'ACME' } }), expect: same(ok(201, (j) => expect(j.apiKey).toMatch(/^bictl_sk_/))) },
        other: {
          req: (c) => ({ method: 'POST', url: `/v1/api-keys/${c.userId}`, payload: { label: 'k', clientId: 'GLOBEX' } }),
          expect: byScope(ok(201), err(403, 'Client GLOBEX is not granted to this user')),
        },
        unknown: {
          req: (c) => ({ method: 'POST', url: `/v1/api-keys/${c.userId}`, payload: { label: 'k' } }),
          expect: byScope(ok(201), err(403, "A member's API key must name one of their granted clients (clientId)")),
        },
        otherUser: {
          req: (c) => ({ method: 'POST', url: `/v1/api-keys/${c.userId}`, payload: { label: 'k', targetUserId: ids.otherUser, clientId: 'GLOBEX' } }),
          expect: byScope(ok(201), err(403, 'Admin role required')),
        },
      },
    },
    'DELETE /v1/api-keys/:userId/:keyId': {
      auth: 'S',
      cases: {
        own: {
          req: (c) => ({ method: 'DELETE', url: `/v1/api-keys/${c.userId}/${freshKey(c.userId)}` }),
          expect: same(ok(200, (j) => expect(j.revoked).toBe(true))),
        },
        other: {
          req: (c) => ({ method: 'DELETE', url: `/v1/api-keys/${c.userId}/${(lastOther = freshKey(ids.otherUser))}` }),
          expect: byScope(ok(200), { status: 404, check: (j) => expect(j).toEqual({ success: false, error: `API key ${lastOther} not found` }) }),
        },
        unknown: { req: (c) => ({ method: 'DELETE', url: `/v1/api-keys/${c.userId}/SK2026A99999` }), expect: same(err(404, 'API key SK2026A99999 not found')) },
      },
    },
    'GET /v1/api-keys/:userId': { auth: 'S', cases: none((c) => ({ method: 'GET', url: `/v1/api-keys/${c.userId}` }), same(ok(200, (j) => expect(Array.isArray(j.keys)).toBe(true)))) },
    'POST /v1/sdk/client/onboard': { auth: 'A', cases: onboardCases(() => '/v1/sdk/client/onboard', true) },
    'POST /v1/sdk/client/onboard/:userId': { auth: 'S-admin', cases: onboardCases((c) => `/v1/sdk/client/onboard/${c.userId}`, false) },
    'GET /v1/bi/admin/clients/:userId': {
      auth: 'S',
      cases: none(
        (c) => ({ method: 'GET', url: `/v1/bi/admin/clients/${c.userId}` }),
        (p) => ok(200, (j) => expect((j.data as { clientId: string }[]).map((r) => r.clientId).sort()).toEqual(CONFINED.has(p) ? ['ACME'] : ['ACME', 'GLOBEX'])),
      ),
    },
    'GET /v1/bi/admin/clients/:clientId/export/:userId': {
      auth: 'S',
      cases: clientReadCases((id, c) => `/v1/bi/admin/clients/${id}/export/${c.userId}`, (id) => (j) => expect(j.clientId).toBe(id), false),
    },
    'GET /v1/bi/admin/clients/:clientId/:userId': {
      auth: 'S',
      cases: clientReadCases((id, c) => `/v1/bi/admin/clients/${id}/${c.userId}`, (id) => (j) => expect((j.client as { clientId: string }).clientId).toBe(id)),
    },
    'GET /v1/bi/admin/clients/:clientId/resources/:userId': {
      auth: 'S',
      cases: clientReadCases((id, c) => `/v1/bi/admin/clients/${id}/resources/${c.userId}`, (id) => (j) => expect(j.clientId).toBe(id)),
    },
    'POST /v1/bi/admin/clients/:clientId/offboard/:userId': {
      auth: 'S-admin',
      cases: {
        // The typed-name check answers before anything is withdrawn: the matrix's clients stay.
        own: { req: (c) => ({ method: 'POST', url: `/v1/bi/admin/clients/ACME/offboard/${c.userId}`, payload: { confirm: 'GLOBEX' } }), expect: same(err(400, 'confirm must repeat the client ID ACME')) },
        unknown: { req: (c) => ({ method: 'POST', url: `/v1/bi/admin/clients/NOPE/offboard/${c.userId}`, payload: { confirm: 'NOPE' } }), expect: same(err(404, 'Client NOPE not found')) },
      },
    },
    'GET /v1/bi/admin/dashboards/:userId': {
      auth: 'S',
      cases: none(
        (c) => ({ method: 'GET', url: `/v1/bi/admin/dashboards/${c.userId}` }),
        (p) => ok(200, (j) => expect((j.dashboards as { owner: string }[]).map((d) => d.owner).sort()).toEqual(CONFINED.has(p) ? ['ACME'] : ['ACME', 'GLOBEX'])),
      ),
    },
    'GET /v1/sdk/dashboards/:facadeId/:userId': {
      auth: 'S',
      cases: {
        own: { req: (c) => ({ method: 'GET', url: `/v1/sdk/dashboards/${ids.acmeFacade}/${c.userId}` }), expect: same(ok(200, (j) => expect(j.owner).toBe('ACME'))) },
        other: {
          req: (c) => ({ method: 'GET', url: `/v1/sdk/dashboards/${ids.globexFacade}/${c.userId}` }),
          expect: byScope(ok(200, (j) => expect(j.owner).toBe('GLOBEX')), { status: 404, check: (j) => expect(j).toEqual({ success: false, error: `Dashboard ${ids.globexFacade} not found` }) }),
        },
        unknown: { req: (c) => ({ method: 'GET', url: `/v1/sdk/dashboards/F2026A99999/${c.userId}` }), expect: same(err(404, 'Dashboard F2026A99999 not found')) },
      },
    },
    'POST /v1/reconciler/retry': {
      auth: 'S-admin',
      cases: {
        own: { req: () => ({ method: 'POST', url: '/v1/reconciler/retry', payload: { key: 'Client/ACME' } }), expect: same(ok(200, (j) => expect(j.phase).toBe('Synced'))) },
        unknown: { req: () => ({ method: 'POST', url: '/v1/reconciler/retry', payload: { key: 'Client/NOPE' } }), expect: same(err(404, 'Manifest Client/NOPE not found')) },
      },
    },
    'GET /v1/sdk/chart-types': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/v1/sdk/chart-types' }), same(ok(200))) },
    'POST /v1/sdk/import': { auth: 'A', cases: dashboardImportCases(() => '/v1/sdk/import') },
    'POST /v1/sdk/import/:userId': { auth: 'S', cases: dashboardImportCases((c) => `/v1/sdk/import/${c.userId}`) },
    'GET /v1/sdk/dashboards/:facadeId': {
      auth: 'A',
      cases: {
        own: { req: () => ({ method: 'GET', url: `/v1/sdk/dashboards/${ids.acmeFacade}` }), expect: same(ok(200, (j) => expect(j.owner).toBe('ACME'))) },
        other: {
          req: () => ({ method: 'GET', url: `/v1/sdk/dashboards/${ids.globexFacade}` }),
          expect: byScope(ok(200, (j) => expect(j.owner).toBe('GLOBEX')), { status: 404, check: (j) => expect(j).toEqual({ success: false, error: `Dashboard ${ids.globexFacade} not found` }) }),
        },
        unknown: { req: () => ({ method: 'GET', url: '/v1/sdk/dashboards/F2026A99999' }), expect: same(err(404, 'Dashboard F2026A99999 not found')) },
      },
    },
    'POST /v1/sdk/import-pipeline': { auth: 'A', cases: pipelineImportCases(() => '/v1/sdk/import-pipeline') },
    'POST /v1/sdk/import-pipeline/:userId': { auth: 'S', cases: pipelineImportCases((c) => `/v1/sdk/import-pipeline/${c.userId}`) },
    'GET /v1/sdk/pipelines/:pipelineId': {
      auth: 'A',
      cases: {
        own: { req: () => ({ method: 'GET', url: `/v1/sdk/pipelines/${ids.acmePipeline}` }), expect: same(ok(200, (j) => expect((j.data as { owner: string }).owner).toBe('ACME'))) },
        other: {
          req: () => ({ method: 'GET', url: `/v1/sdk/pipelines/${ids.globexPipeline}` }),
          expect: byScope(ok(200), { status: 404, check: (j) => expect(j).toEqual({ success: false, message: `Pipeline ${ids.globexPipeline} not found` }) }),
        },
        shared: {
          // Connections of two clients: no owner, admins only.
          req: () => ({ method: 'GET', url: `/v1/sdk/pipelines/${ids.mixedPipeline}` }),
          expect: byScope(ok(200, (j) => expect((j.data as { owner: unknown }).owner).toBe(null)), { status: 404, check: (j) => expect(j).toEqual({ success: false, message: `Pipeline ${ids.mixedPipeline} not found` }) }),
        },
        unknown: { req: () => ({ method: 'GET', url: '/v1/sdk/pipelines/DP-1' }), expect: same(msg(404, 'Pipeline DP-1 not found')) },
      },
    },
    'GET /v1/sdk/pipelines/:pipelineId/:userId': {
      auth: 'S',
      cases: {
        own: { req: (c) => ({ method: 'GET', url: `/v1/sdk/pipelines/${ids.acmePipeline}/${c.userId}` }), expect: same(ok(200, (j) => expect((j.data as { owner: string }).owner).toBe('ACME'))) },
        other: {
          req: (c) => ({ method: 'GET', url: `/v1/sdk/pipelines/${ids.globexPipeline}/${c.userId}` }),
          expect: byScope(ok(200), { status: 404, check: (j) => expect(j).toEqual({ success: false, message: `Pipeline ${ids.globexPipeline} not found` }) }),
        },
        shared: {
          req: (c) => ({ method: 'GET', url: `/v1/sdk/pipelines/${ids.mixedPipeline}/${c.userId}` }),
          expect: byScope(ok(200, (j) => expect((j.data as { owner: unknown }).owner).toBe(null)), { status: 404, check: (j) => expect(j).toEqual({ success: false, message: `Pipeline ${ids.mixedPipeline} not found` }) }),
        },
        unknown: { req: (c) => ({ method: 'GET', url: `/v1/sdk/pipelines/DP-1/${c.userId}` }), expect: same(msg(404, 'Pipeline DP-1 not found')) },
      },
    },
    'GET /v1/bi/admin/pipelines/:userId': {
      auth: 'S',
      cases: none(
        (c) => ({ method: 'GET', url: `/v1/bi/admin/pipelines/${c.userId}` }),
        (p) =>
          ok(200, (j) => {
            const listed = (j.pipelines as { pipelineId: string }[]).map((x) => x.pipelineId).sort();
            expect(listed).toEqual((CONFINED.has(p) ? [ids.acmePipeline] : [ids.acmePipeline, ids.globexPipeline, ids.mixedPipeline]).sort());
          }),
      ),
    },
    'GET /v1/bi/admin/connections/:userId': {
      auth: 'S-admin',
      cases: none(
        (c) => ({ method: 'GET', url: `/v1/bi/admin/connections/${c.userId}` }),
        same(
          ok(200, (j) => {
            const acme = (j.connections as { connectionId: string; owner: string; usedBy: { clients: string[] } }[]).find((x) => x.connectionId === ACME_DB);
            expect(acme).toMatchObject({ owner: 'ACME', usedBy: { clients: ['ACME'] } });
          }),
        ),
      ),
    },
    'POST /v1/bi/admin/connections/:connectionId/test/:userId': {
      auth: 'S-admin',
      cases: {
        // No account URL: the test answers without any network.
        own: { req: (c) => ({ method: 'POST', url: `/v1/bi/admin/connections/${ACME_DB}/test/${c.userId}`, payload: {} }), expect: same(ok(200, (j) => expect((j.connection as { lastTest: unknown }).lastTest).toMatchObject({ ok: false }))) },
        unknown: { req: (c) => ({ method: 'POST', url: `/v1/bi/admin/connections/${UNKNOWN_DB}/test/${c.userId}` }), expect: same(err(404, `Connection ${UNKNOWN_DB} not found`)) },
      },
    },
    'GET /v1/reconciler/events': { auth: 'S', stream: true, cases: none(() => ({ method: 'GET', url: '/v1/reconciler/events' }), same({ status: 200 })) },
    'GET /v1/reconciler/status': {
      auth: 'S',
      cases: none(
        () => ({ method: 'GET', url: '/v1/reconciler/status' }),
        (p) =>
          ok(200, (j) => {
            const keys = (j.items as { key?: string; kind: string; name: string }[]).map((i) => `${i.kind}/${i.name}`).sort();
            if (CONFINED.has(p)) expect(keys).toEqual(['Client/ACME', 'Pipeline/acme']);
            else expect(keys).toEqual(expect.arrayContaining(['Client/ACME', 'Client/GLOBEX', 'Pipeline/globex', 'Pipeline/mixed', 'Connection/shared', 'CoreModel/core-SM2026A00001']));
          }),
      ),
    },
    'POST /v1/reconciler/sync': { auth: 'S-admin', cases: none(() => ({ method: 'POST', url: '/v1/reconciler/sync', payload: {} }), same(ok(200))) },
    'POST /v1/reconciler/webhook': {
      auth: 'public',
      cases: none(() => ({ method: 'POST', url: '/v1/reconciler/webhook', payload: {} }), same(err(404, 'Git mode is not enabled (set BI_GIT_URL)'))),
    },
    'GET /v1/settings/session/:userId': {
      auth: 'S',
      cases: none((c) => ({ method: 'GET', url: `/v1/settings/session/${c.userId}` }), (p) => ok(200, (j) => expect(j.settings).toBe(p === 'adminSession'))),
    },
    'GET /v1/bi/admin/core-models/:userId': { auth: 'S-admin', cases: none((c) => ({ method: 'GET', url: `/v1/bi/admin/core-models/${c.userId}` }), same(ok(200))) },
    'POST /v1/bi/admin/test-connection/:userId': {
      auth: 'S-admin',
      cases: none((c) => ({ method: 'POST', url: `/v1/bi/admin/test-connection/${c.userId}`, payload: { vendor: 'SNOWFLAKE' } }), same({ status: 400, check: (j) => expect(j.success).toBe(false) })),
    },
    'POST /v1/bi/admin/connections/:userId': {
      auth: 'S-admin',
      cases: none((c) => ({ method: 'POST', url: `/v1/bi/admin/connections/${c.userId}`, payload: { vendor: 'SNOWFLAKE' } }), same({ status: 400, check: (j) => expect(j.success).toBe(false) })),
    },
    'PATCH /v1/bi/admin/connections/:connectionId/:userId': {
      auth: 'S-admin',
      cases: {
        onboarding: {
          req: (c) => ({ method: 'PATCH', url: `/v1/bi/admin/connections/${ACME_DB}/${c.userId}`, payload: { name: 'Renamed' } }),
          expect: same(err(409, `Connection ${ACME_DB} is defined by Client/ACME: change it there`)),
        },
        unknown: { req: (c) => ({ method: 'PATCH', url: `/v1/bi/admin/connections/${UNKNOWN_DB}/${c.userId}`, payload: { name: 'x' } }), expect: same(err(404, `Connection ${UNKNOWN_DB} not found`)) },
      },
    },
    'DELETE /v1/bi/admin/connections/:connectionId/:userId': {
      auth: 'S-admin',
      cases: {
        inUse: {
          req: (c) => ({ method: 'DELETE', url: `/v1/bi/admin/connections/${ACME_DB}/${c.userId}` }),
          expect: same({ status: 409, check: (j) => expect(j).toMatchObject({ success: false, usedBy: { clients: ['ACME'] } }) }),
        },
        unknown: { req: (c) => ({ method: 'DELETE', url: `/v1/bi/admin/connections/${UNKNOWN_DB}/${c.userId}` }), expect: same(err(404, `Connection ${UNKNOWN_DB} not found`)) },
      },
    },
    'GET /v1/bi/admin/clients/:clientId/audit/:userId': {
      auth: 'S-admin',
      cases: {
        own: { req: (c) => ({ method: 'GET', url: `/v1/bi/admin/clients/ACME/audit/${c.userId}` }), expect: same(ok(200, (j) => expect(j.clientId).toBe('ACME'))) },
        unknown: { req: (c) => ({ method: 'GET', url: `/v1/bi/admin/clients/NOPE/audit/${c.userId}` }), expect: same(err(404, 'Client NOPE not found')) },
      },
    },
    'GET /v1/bi/admin/users/:userId': {
      auth: 'S-admin',
      cases: none(
        (c) => ({ method: 'GET', url: `/v1/bi/admin/users/${c.userId}` }),
        same(ok(200, (j) => expect((j.users as { username: string; disabled: boolean; clients: string[] }[]).find((u) => u.username === 'dan')).toMatchObject({ disabled: true, clients: ['ACME'] }))),
      ),
    },
    'POST /v1/bi/admin/users/:userId': {
      auth: 'S-admin',
      cases: none(
        (c) => ({ method: 'POST', url: `/v1/bi/admin/users/${c.userId}`, payload: { username: `new-${++created}`, password: 'a-long-password', role: 'member', clients: ['acme'] } }),
        same(ok(201, (j) => expect(j.user).toMatchObject({ username: `new-${created}`, role: 'member', clients: ['ACME'], disabled: false }))),
      ),
    },
    'GET /v1/bi/admin/api-keys/:userId': {
      auth: 'S-admin',
      cases: none((c) => ({ method: 'GET', url: `/v1/bi/admin/api-keys/${c.userId}` }), same(ok(200, (j) => expect((j.keys as { username: string }[]).map((k) => k.username)).toContain('mia')))),
    },
    'POST /v1/bi/admin/users/:targetUserId/password/:userId': {
      auth: 'S-admin',
      cases: {
        other: {
          req: (c) => ({ method: 'POST', url: `/v1/bi/admin/users/${ids.otherUser}/password/${c.userId}`, payload: { password: 'a-new-password' } }),
          expect: same(ok(200, (j) => expect(j.user).toMatchObject({ userId: ids.otherUser }))),
        },
        unknown: {
          req: (c) => ({ method: 'POST', url: `/v1/bi/admin/users/U2026A99999/password/${c.userId}`, payload: { password: 'a-new-password' } }),
          expect: same(err(404, 'User U2026A99999 not found')),
        },
      },
    },
    'DELETE /v1/bi/admin/users/:targetUserId/:userId': {
      auth: 'S-admin',
      cases: {
        other: {
          req: (c) => ({ method: 'DELETE', url: `/v1/bi/admin/users/${(lastVictim = victims.pop() ?? 'U2026A99998')}/${c.userId}` }),
          expect: same({ status: 200, check: (j) => expect(j).toEqual({ success: true, userId: lastVictim, deleted: true }) }),
        },
        unknown: {
          req: (c) => ({ method: 'DELETE', url: `/v1/bi/admin/users/U2026A99999/${c.userId}` }),
          expect: same(err(404, 'User U2026A99999 not found')),
        },
      },
    },
    'PATCH /v1/bi/admin/users/:targetUserId/:userId': {
      auth: 'S-admin',
      cases: {
        other: {
          req: (c) => ({ method: 'PATCH', url: `/v1/bi/admin/users/${ids.mia}/${c.userId}`, payload: { role: 'member', clients: ['ACME'] } }),
          expect: same(ok(200, (j) => expect(j.user).toMatchObject({ userId: ids.mia, role: 'member', clients: ['ACME'], disabled: false }))),
        },
        unknown: {
          req: (c) => ({ method: 'PATCH', url: `/v1/bi/admin/users/U2026A99999/${c.userId}`, payload: { disabled: true } }),
          expect: same(err(404, 'User U2026A99999 not found')),
        },
      },
    },
    ...runRoutes(),
    'GET /metrics': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/metrics' }), same({ status: 200 })) },
    'GET /v1/reconciler/notifiers': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'GET', url: '/v1/reconciler/notifiers' }), same({ status: 200, check: (j) => expect(Array.isArray(j.notifiers)).toBe(true) })),
    },
    // Round 3: ClientSet reads/preview/approve and the lifecycle shortcuts (admin), the audit read (every session, members their clients).
    'GET /v1/reconciler/clientsets': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'GET', url: '/v1/reconciler/clientsets' }), same(ok(200, (j) => expect(Array.isArray(j.clientSets)).toBe(true)))),
    },
    'GET /v1/reconciler/clientsets/:name': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'GET', url: '/v1/reconciler/clientsets/nope' }), same(err(404, 'ClientSet nope not found'))),
    },
    'POST /v1/reconciler/clientsets/:name/approve': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'POST', url: '/v1/reconciler/clientsets/nope/approve', payload: {} }), same(err(404, 'ClientSet nope not found'))),
    },
    'POST /v1/reconciler/clientsets/preview': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'POST', url: '/v1/reconciler/clientsets/preview', payload: { kind: 'ClientSet' } }), same(err(400, 'metadata is required; spec is required'))),
    },
    ...Object.fromEntries(
      ['suspend', 'resume', 'restore', 'purge'].map((action) => [
        `POST /v1/bi/admin/clients/:clientId/${action}/:userId`,
        {
          auth: 'S-admin' as const,
          cases: none(
            (c) => ({ method: 'POST', url: `/v1/bi/admin/clients/NOPE/${action}/${c.userId}`, payload: action === 'purge' ? { confirm: 'NOPE' } : {} }),
            same(err(404, 'Client NOPE not found')),
          ),
        },
      ]),
    ),
    'GET /v1/bi/admin/audit/:userId': {
      auth: 'S',
      cases: none((c) => ({ method: 'GET', url: `/v1/bi/admin/audit/${c.userId}?limit=5` }), same(ok(200, (j) => expect(Array.isArray(j.entries)).toBe(true)))),
    },
    // Round 3, objects (admin): desired vs applied with the field diff, history, rollback.
    'GET /v1/reconciler/objects/:kind/:name': {
      auth: 'S-admin',
      cases: {
        own: { req: () => ({ method: 'GET', url: '/v1/reconciler/objects/Pipeline/acme' }), expect: same(ok(200, (j) => expect(j.object).toMatchObject({ key: 'Pipeline/acme', inSync: true }))) },
        unknown: { req: () => ({ method: 'GET', url: '/v1/reconciler/objects/Pipeline/nope' }), expect: same(err(404, 'Pipeline/nope not found')) },
      },
    },
    'GET /v1/reconciler/objects/:kind/:name/history': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'GET', url: '/v1/reconciler/objects/Client/GLOBEX/history' }), same(ok(200, (j) => expect(j.history).toMatchObject({ mode: 'directory' })))),
    },
    'POST /v1/reconciler/rollback': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'POST', url: '/v1/reconciler/rollback', payload: { revision: 'abcdef1' } }), same(err(409, 'Reverting a commit needs git mode (set BI_GIT_URL); in directory mode roll an object back to an applied version'))),
    },
    'POST /v1/reconciler/objects/:kind/:name/rollback': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'POST', url: '/v1/reconciler/objects/Pipeline/nope/rollback', payload: { version: 1 } }), same(err(404, 'Pipeline/nope not found'))),
    },
    'GET /v1/sdk/pipeline-runs/:runId/export/:what/:userId': {
      auth: 'S',
      cases: {
        own: { req: (c) => ({ method: 'GET', url: `/v1/sdk/pipeline-runs/${newestRun(ids.acmePipeline)}/export/rejects/${c.userId}?format=ndjson` }), expect: same({ status: 200 }) },
        other: {
          req: (c) => ({ method: 'GET', url: `/v1/sdk/pipeline-runs/${newestRun(ids.globexPipeline)}/export/logs/${c.userId}` }),
          expect: (p) => (CONFINED.has(p) ? err(404, `Run ${newestRun(ids.globexPipeline)} not found`) : { status: 200 }),
        },
        unknown: { req: (c) => ({ method: 'GET', url: `/v1/sdk/pipeline-runs/RUN-1/export/logs/${c.userId}` }), expect: same(err(404, 'Run RUN-1 not found')) },
      },
    },
    'PATCH /v1/bi/admin/pipelines/:pipelineId/schedule/:userId': {
      auth: 'S-admin',
      cases: {
        own: {
          req: (c) => ({ method: 'PATCH', url: `/v1/bi/admin/pipelines/${ids.acmePipeline}/schedule/${c.userId}`, payload: { isEnabled: false } }),
          expect: same(ok(200, (j) => expect((j.data as { schedule: unknown }).schedule).toMatchObject({ isEnabled: false }))),
        },
        unknown: { req: (c) => ({ method: 'PATCH', url: `/v1/bi/admin/pipelines/DP-1/schedule/${c.userId}`, payload: { isEnabled: false } }), expect: same(err(404, 'Pipeline DP-1 not found')) },
      },
    },
    'GET /v1/reconciler/workers': {
      auth: 'S-admin',
      cases: none(() => ({ method: 'GET', url: '/v1/reconciler/workers' }), same({ status: 200, check: (j) => expect(j).toEqual({ success: true, mode: 'in-process', workers: [] }) })),
    },
    // The workers' reports: their own bearer token (BI_WORKER_TOKEN), unset here, so refused for every caller.
    ...Object.fromEntries(
      (['heartbeat', 'runs/:runId/claim', 'runs/:runId/progress', 'runs/:runId/finish'] as const).map((r) => [
        `POST /v1/workers/${r}`,
        {
          auth: 'public',
          cases: none(() => ({ method: 'POST', url: `/v1/workers/${r.replace(':runId', 'RUN-1')}`, payload: {} }), same(err(401, 'BI_WORKER_TOKEN is not set on the controller: it accepts no worker'))),
        },
      ]),
    ),
    'GET /openapi.json': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/openapi.json' }), same({ status: 200 })) },
    'GET /docs': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/docs' }), same({ status: 200 })) },
    'GET /': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/' }), same({ status: 302 })) },
    'GET /ui': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/ui' }), same({ status: 302 })) },
    'GET /ui/': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/ui/' }), same({ status: 200 })) },
    'GET /ui/*': { auth: 'public', cases: none(() => ({ method: 'GET', url: '/ui/js/app.js' }), same({ status: 200 })) },
  };
}

let created = 0;
let lastOther = '';
let lastVictim = '';
function freshKey(userId: string): string {
  return t.rt.auth.createKey({ userId, label: 'spare', clientId: 'ACME', createdBy: userId }).keyId;
}

/** What the authentication layer answers before any object is looked at, or undefined to go on. */
function authOutcome(auth: Auth, p: Principal): Outcome | undefined {
  if (auth === 'public') return undefined;
  if (auth === 'A') {
    if (SESSIONS.has(p)) return { status: 401, body: { error: 'API key required' } };
    if (p === 'disabledKey') return { status: 401, body: { error: 'Invalid API key' } };
    return undefined;
  }
  if (!SESSIONS.has(p) || p === 'disabledSession') return err(401, 'Session required');
  if (auth === 'S-admin' && p !== 'adminSession') return err(403, 'Admin role required');
  return undefined;
}

async function send(req: Req, c: Caller) {
  return t.app.inject({ method: req.method, url: req.url, headers: req.anonymous ? {} : c.headers, ...(req.payload !== undefined ? { payload: req.payload as object } : {}) });
}

/** Opens the event stream over a socket and answers its status once the first comment arrives. */
async function streamStatus(url: string, c: Caller): Promise<number> {
  const address = t.app.server.address() as AddressInfo | null;
  if (!address) await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  return new Promise((resolve, reject) => {
    const r = request({ host: '127.0.0.1', port, path: `${url}?ctn=${encodeURIComponent(c.headers.ctn ?? '')}`, headers: { cookie: c.headers.cookie ?? '' } });
    r.on('response', (res) => {
      res.once('data', () => {
        resolve(res.statusCode ?? 0);
        r.destroy();
      });
    });
    r.on('error', reject);
    r.end();
  });
}

describe('authorization matrix: every route × every caller × own / other / shared / unknown', () => {
  beforeAll(async () => {
    // Runs are held until cancelled: the start and cancel rows below see a deterministic state.
    t = await makeTestApp({ engine: new FakeEngine({ hold: true }) });
    writeCoreModel(t);
    t.write('connections/shared.yaml', manifest('Connection', 'shared', { connectionId: SHARED_DB, name: 'Platform warehouse', shared: true, tenantSchema: 't_{clientId}' }));
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard('ACME', { connectionId: ACME_DB })));
    t.write('clients/GLOBEX.yaml', clientManifest(packageWithDashboard('GLOBEX', { connectionId: GLOBEX_DB })));
    await t.sync();
    t.write('pipelines/acme.yaml', manifest('Pipeline', 'acme', pipeline(ACME_DB, ACME_DB)));
    t.write('pipelines/globex.yaml', manifest('Pipeline', 'globex', pipeline(GLOBEX_DB, GLOBEX_DB)));
    t.write('pipelines/mixed.yaml', manifest('Pipeline', 'mixed', pipeline(ACME_DB, GLOBEX_DB)));
    await t.sync();
    const db = t.rt.db;
    const one = (sql: string, ...args: unknown[]) => Object.values(db.prepare(sql).get(...args) as Record<string, string>)[0];
    ids.acmeVdm = one("SELECT vdm_id FROM vdms WHERE client_id = 'ACME' ORDER BY position LIMIT 1");
    ids.globexVdm = one("SELECT vdm_id FROM vdms WHERE client_id = 'GLOBEX' ORDER BY position LIMIT 1");
    ids.acmeFacade = one("SELECT facade_id FROM facades WHERE client_id = 'ACME'");
    ids.globexFacade = one("SELECT facade_id FROM facades WHERE client_id = 'GLOBEX'");
    for (const name of ['acme', 'globex', 'mixed'] as const) {
      ids[`${name}Pipeline`] = one('SELECT pipeline_id FROM pipelines WHERE manifest_key = ?', `Pipeline/${name}`);
    }
    const auth = t.rt.auth;
    const session = (s: TestSession, principal: Principal): Caller => ({ principal, userId: s.userId, headers: s.headers });
    const key = (k: TestKey, principal: Principal): Caller => ({ principal, userId: k.userId, headers: k.headers });
    const root = await loginAs(t, { username: 'root', role: 'admin' });
    callers.set('adminSession', session(root, 'adminSession'));
    callers.set('adminKey', key(await createUserWithKey(t, { username: 'root' }), 'adminKey'));
    callers.set('scopedKey', key(await createUserWithKey(t, { username: 'root', clientId: 'ACME' }), 'scopedKey'));
    const mia = await createTestUser(t, { username: 'mia', role: 'member' });
    ids.mia = mia.userId;
    auth.users.grant(mia.userId, ['ACME'], 'test');
    callers.set('memberSession', session(await loginAs(t, { username: 'mia' }), 'memberSession'));
    callers.set('memberKey', key(await createUserWithKey(t, { username: 'mia', clientId: 'ACME' }), 'memberKey'));
    const dan = await createTestUser(t, { username: 'dan', role: 'member' });
    auth.users.grant(dan.userId, ['ACME'], 'test');
    const danSession = await loginAs(t, { username: 'dan' });
    const danKey = await createUserWithKey(t, { username: 'dan', clientId: 'ACME' });
    auth.users.update(dan.userId, { disabled: true });
    callers.set('disabledSession', session(danSession, 'disabledSession'));
    callers.set('disabledKey', key(danKey, 'disabledKey'));
    ids.otherUser = (await createTestUser(t, { username: 'olga', role: 'member' })).userId;
    for (let i = 0; i < P.length; i++) victims.push((await createTestUser(t, { username: `victim-${i}`, role: 'member' })).userId);
    auth.users.grant(ids.otherUser, ['GLOBEX'], 'test');
  });
  afterAll(async () => t.close());

  it('has an entry for every registered route (a new route without one fails here)', () => {
    const registered = t.app.registeredRoutes.map((r) => `${r.method} ${r.url}`).sort();
    expect(Object.keys(routeTable()).sort()).toEqual([...new Set(registered)]);
  });

  it('the event stream shows a member only the events of their clients\' objects', async () => {
    if (!t.app.server.address()) await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const open = (c: Caller) => {
      const chunks: string[] = [];
      const r = request({ host: '127.0.0.1', port, path: `/v1/reconciler/events?ctn=${encodeURIComponent(c.headers.ctn ?? '')}`, headers: { cookie: c.headers.cookie ?? '' } });
      r.on('response', (res) => res.on('data', (d: Buffer) => chunks.push(d.toString())));
      r.end();
      return { chunks, close: () => r.destroy() };
    };
    const member = open(callers.get('memberSession') as Caller);
    const admin = open(callers.get('adminSession') as Caller);
    const until = (cond: () => boolean) => waitFor(() => cond() || undefined);
    await until(() => member.chunks.join('').includes(': connected') && admin.chunks.join('').includes(': connected'));
    t.write('pipelines/acme.yaml', manifest('Pipeline', 'acme', { ...pipeline(ACME_DB, ACME_DB), description: 'changed' }));
    t.write('pipelines/globex.yaml', manifest('Pipeline', 'globex', { ...pipeline(GLOBEX_DB, GLOBEX_DB), description: 'changed' }));
    await t.sync();
    await until(() => admin.chunks.join('').includes('"key":"Pipeline/globex"') && admin.chunks.join('').includes('"key":"Pipeline/acme"'));
    await until(() => member.chunks.join('').includes('"key":"Pipeline/acme"'));
    const keys = (chunks: string[]) => new Set(chunks.join('').split('\n\n').filter((b) => b.startsWith('data: ')).map((b) => (JSON.parse(b.slice(6)) as { key: string }).key));
    member.close();
    admin.close();
    expect([...keys(member.chunks)]).toEqual(['Pipeline/acme']);
    expect([...keys(admin.chunks)].sort()).toEqual(['Pipeline/acme', 'Pipeline/globex']);
  });

  for (const [route, entry] of Object.entries(routeTable())) {
    it(route, async () => {
      const table = routeTable()[route] as RouteEntry;
      for (const principal of P) {
        const c = callers.get(principal) as Caller;
        for (const [object, kase] of Object.entries(table.cases)) {
          const req = kase.req(c);
          const expected = (!req.anonymous && authOutcome(entry.auth, principal)) || kase.expect(principal, c);
          const label = `${principal} × ${object}: ${req.method} ${req.url}`;
          if (entry.stream && expected.status === 200) {
            expect(await streamStatus(req.url, c), label).toBe(200);
            continue;
          }
          const res = await send(req, c);
          expect(res.statusCode, `${label} → ${res.body.slice(0, 300)}`).toBe(expected.status);
          if (expected.body !== undefined) expect(res.json(), label).toEqual(expected.body);
          if (expected.check) expected.check(res.json());
        }
      }
    });
  }
});
