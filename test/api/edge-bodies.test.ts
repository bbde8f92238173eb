import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { errorHandler } from '../../api/errors.ts';
import { edgeValidator, optionalBody } from '../../api/validation.ts';
import { loginAs, type TestSession } from '../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../helpers/runtime.ts';

/**
 * Request bodies and the spec's own queries (audit, client listing, reconcile status) are checked
 * by their route schemas at the edge (api/validation.ts, docs/api.md "Error bodies"), with the
 * texts the hand-written checks gave: a bad one is a 400 and the handler never runs.
 */
describe('the edge checks bodies and the spec queries by their schemas', () => {
  let t: TestApp;
  let s: TestSession;
  afterEach(async () => {
    await t.close();
  });
  const send = (method: 'POST' | 'PATCH', url: string, payload?: unknown) =>
    t.app.inject({ method, url, headers: { ...s.headers, ...(payload === undefined ? {} : { 'content-type': 'application/json' }) }, ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }) });
  const get = (url: string) => t.app.inject({ url, headers: s.headers });
  /** The answer to a refused request: 400, the text, the problems each by its path. */
  const refused = (error: string, ...problems: [path: string, message: string][]) => [400, { success: false, error, code: 'validation', problems: problems.map(([path, message]) => ({ path, message })) }];

  it('a wrong type for label: 400 naming label with the old text, and the handler never ran (no key created)', async () => {
    t = await makeTestApp();
    s = await loginAs(t);
    const res = await send('POST', `/v1/api-keys/${s.userId}`, { label: 7 });
    expect([res.statusCode, res.json()]).toEqual(refused('label must be a string', ['label', 'must be a string']));
    expect(t.rt.auth.listKeys(s.userId)).toEqual([]);
    // What is accepted stays accepted: null or "" for an optional field is that field left out, an unknown field is ignored.
    const ok = await send('POST', `/v1/api-keys/${s.userId}`, { label: ' ci ', targetUserId: null, expiresAt: '', clientId: null, color: 'blue' });
    expect([ok.statusCode, ok.json().label]).toEqual([201, 'ci']);
    // null for the required label is it missing; a body that is not an object says what it must be.
    expect((await send('POST', `/v1/api-keys/${s.userId}`, { label: null })).json().problems).toEqual([{ path: 'label', message: 'is required' }]);
    expect((await send('POST', `/v1/api-keys/${s.userId}`, [])).json()).toMatchObject({ error: 'Request body must be a JSON object with a label', problems: [{ path: '', message: 'Request body must be a JSON object with a label' }] });
    expect(t.rt.auth.listKeys(s.userId)).toHaveLength(1);
  });

  it('every checked body: its old text and problems, nothing done', async () => {
    t = await makeTestApp();
    s = await loginAs(t);
    const U = s.userId;
    const cases: [string, 'POST' | 'PATCH', string, unknown, string, { path: string; message: string }[]][] = [
      ['login', 'POST', '/v1/auth/login', { username: 5, password: null }, 'username must be a string; password is required', [{ path: 'username', message: 'must be a string' }, { path: 'password', message: 'is required' }]],
      ['user', 'POST', `/v1/bi/admin/users/${U}`, { username: 'x', password: 'long-enough', role: 'owner', clients: [' a b '] }, 'role must be one of admin, member; clients/0 must be 1 to 64 letters, digits, "_" or "-"', [{ path: 'role', message: 'must be one of admin, member' }, { path: 'clients/0', message: 'must be 1 to 64 letters, digits, "_" or "-"' }]],
      ['user change', 'PATCH', `/v1/bi/admin/users/${U}/${U}`, { disabled: 'yes', clients: 'ACME', version: 0 }, 'clients must be an array of client IDs; disabled must be boolean; version must be a positive integer', [{ path: 'clients', message: 'must be an array of client IDs' }, { path: 'disabled', message: 'must be boolean' }, { path: 'version', message: 'must be a positive integer' }]],
      ['password reset', 'POST', `/v1/bi/admin/users/${U}/password/${U}`, { password: 5 }, 'password is required', [{ path: 'password', message: 'is required' }]],
      ['connection', 'POST', `/v1/bi/admin/connections/${U}`, { vendor: 'ORACLE', username: 5, port: 70000 }, 'Validation failed: vendor must be one of SNOWFLAKE, POSTGRESQL; username must be a string; port must be an integer from 1 to 65535', [{ path: 'vendor', message: 'must be one of SNOWFLAKE, POSTGRESQL' }, { path: 'username', message: 'must be a string' }, { path: 'port', message: 'must be an integer from 1 to 65535' }]],
      ['connection edit', 'PATCH', `/v1/bi/admin/connections/D2026A00001/${U}`, [], 'Request body must be a JSON object', [{ path: '', message: 'Request body must be a JSON object' }]],
      ['rollback', 'POST', '/v1/reconciler/objects/Pipeline/p/rollback', { version: 0, colour: 1 }, 'version must be an integer ≥ 1; colour is not a field of a rollback (revision or version)', [{ path: 'version', message: 'must be an integer ≥ 1' }, { path: 'colour', message: 'is not a field of a rollback (revision or version)' }]],
      ['revert', 'POST', '/v1/reconciler/rollback', { revision: null }, 'revision must be a commit SHA (7 to 40 hex digits)', [{ path: 'revision', message: 'must be a commit SHA (7 to 40 hex digits)' }]],
      ['sync', 'POST', '/v1/reconciler/sync', { allowMassPrune: 'yes' }, 'allowMassPrune must be boolean', [{ path: 'allowMassPrune', message: 'must be boolean' }]],
      ['retry', 'POST', '/v1/reconciler/retry', ['Client/ACME'], 'key must be a manifest key such as Client/ACME', [{ path: 'key', message: 'must be a manifest key such as Client/ACME' }]],
      ['approve', 'POST', '/v1/reconciler/clientsets/none/approve', { digest: 5 }, 'digest must be a string', [{ path: 'digest', message: 'must be a string' }]],
    ];
    const usersBefore = t.rt.auth.users.views();
    for (const [what, method, url, payload, error, problems] of cases) {
      const res = await send(method, url, payload);
      expect([res.statusCode, res.json()], what).toEqual([400, { success: false, error, code: 'validation', problems }]);
    }
    // No body at all: the retry has no key; an optional body (sync, approve) may be left out.
    expect((await send('POST', '/v1/reconciler/retry')).json().error).toBe('key must be a manifest key such as Client/ACME');
    expect((await send('POST', '/v1/reconciler/clientsets/none/approve')).json()).toEqual({ success: false, error: 'ClientSet none not found' });
    expect(t.rt.auth.users.views()).toEqual(usersBefore);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM connections').get()).toEqual({ n: 0 });
  });

  it('the audit query: every bad value named by the parameter, a repeated one refused, defaults in', async () => {
    t = await makeTestApp();
    s = await loginAs(t);
    const bad = await get(`/v1/bi/admin/audit/${s.userId}?order=up&limit=0&actor=user:&clientId=a&clientId=b`);
    expect([bad.statusCode, bad.json()]).toEqual(
      refused(
        'clientId must be given once; actor must be user, key, git, controller or cli, optionally followed by :<id>, or an actor ID; limit must be an integer from 1 to 1000; order must be asc or desc',
        ['clientId', 'must be given once'],
        ['actor', 'must be user, key, git, controller or cli, optionally followed by :<id>, or an actor ID'],
        ['limit', 'must be an integer from 1 to 1000'],
        ['order', 'must be asc or desc'],
      ),
    );
    expect((await get(`/v1/bi/admin/audit/${s.userId}?since=garbage`)).json().error).toBe('since must be an ISO 8601 date-time');
    const page = await get(`/v1/bi/admin/audit/${s.userId}?limit=&order=&since=2026`);
    expect(page.statusCode).toBe(200);
  });

  it('the client listing query: the spec texts, status case-insensitive, an empty page refused', async () => {
    t = await makeTestApp();
    s = await loginAs(t);
    const list = (q: string) => get(`/v1/bi/admin/clients/${s.userId}?${q}`);
    const bad = await list('page=&limit=0&status=gone&sort=x&order=up&search=a&search=b');
    expect([bad.statusCode, bad.json()]).toEqual(
      refused(
        'page must be a positive integer; limit must be an integer from 1 to 1000; status must be one of ACTIVE, FAILED, SUSPENDED, OFFBOARDED, DELETED; search must be given once; order must be asc or desc; sort must be one of clientId, clientName, status, onboardedDate',
        ['page', 'must be a positive integer'],
        ['limit', 'must be an integer from 1 to 1000'],
        ['status', 'must be one of ACTIVE, FAILED, SUSPENDED, OFFBOARDED, DELETED'],
        ['search', 'must be given once'],
        ['order', 'must be asc or desc'],
        ['sort', 'must be one of clientId, clientName, status, onboardedDate'],
      ),
    );
    expect((await list('page=1234567890')).json().error).toBe('page must be a positive integer');
    expect((await list(`search=${'a'.repeat(257)}`)).json().error).toBe('search must be at most 256 characters');
    expect((await list('search=(')).json().error).toMatch(/^search is not a valid regular expression: /);
    const ok = await list('status=deleted&page=2&limit=5&sort=clientName&order=');
    expect([ok.statusCode, ok.json().pagination]).toEqual([200, { page: 2, limit: 5, total: 0, totalPages: 0 }]);
  });

  it('the reconcile status query: kinds the reconciler applies, phases; an empty or repeated one refused', async () => {
    t = await makeTestApp();
    s = await loginAs(t);
    const kinds = t.rt.reconciler.kinds.join(', ');
    const bad = await get('/v1/reconciler/status?kind=Nope&phase=');
    expect([bad.statusCode, bad.json()]).toEqual(
      refused(
        `kind must be one of ${kinds}; phase must be one of Pending, Synced, Failed, Invalid, Pruned`,
        ['kind', `must be one of ${kinds}`],
        ['phase', 'must be one of Pending, Synced, Failed, Invalid, Pruned'],
      ),
    );
    expect((await get('/v1/reconciler/status?kind=Client&kind=Dashboard')).json().error).toBe(`kind must be one of ${kinds}`);
    expect((await get('/v1/reconciler/status?kind=Client&phase=Synced')).statusCode).toBe(200);
  });

  it('the rules of a body schema at the edge, on a bare Fastify', async () => {
    const probe = Fastify();
    probe.setValidatorCompiler(edgeValidator);
    probe.setErrorHandler(errorHandler);
    const seen: unknown[] = [];
    const handler = async (req: { body: unknown }) => {
      seen.push(req.body);
      return { ok: true };
    };
    const schema = { type: 'object', required: ['name'], properties: { name: { type: 'string', 'x-messages': { type: 'must be text' } }, tags: { type: 'array', items: { type: 'string' }, 'x-messages': { items: 'must be a list of tags' } } }, 'x-messages': { type: 'Send an object' } };
    probe.post('/required', { schema: { body: schema } }, handler);
    probe.post('/optional', { schema: { body: optionalBody(schema) } }, handler);
    probe.post('/empty', { schema: { body: { ...schema, 'x-non-object': 'empty' } } }, handler);
    const call = async (url: string, payload?: unknown) => {
      const res = await probe.inject({ method: 'POST', url, ...(payload === undefined ? {} : { headers: { 'content-type': 'application/json' }, payload: JSON.stringify(payload) }) });
      return [res.statusCode, res.json()];
    };
    expect(await call('/required')).toEqual([400, { success: false, error: 'Send an object', code: 'validation', problems: [{ path: '', message: 'Send an object' }] }]);
    expect(await call('/required', { name: null })).toEqual([400, { success: false, error: 'name is required', code: 'validation', problems: [{ path: 'name', message: 'is required' }] }]);
    expect(await call('/required', { name: 5, tags: ['a', 7] })).toEqual([400, expect.objectContaining({ error: 'name must be text; tags must be a list of tags' })]);
    expect(await call('/optional')).toEqual([200, { ok: true }]);
    expect(await call('/optional', [])).toEqual([400, expect.objectContaining({ error: 'Send an object' })]);
    expect(await call('/empty', 'text')).toEqual([400, expect.objectContaining({ error: 'name is required' })]);
    expect(await call('/required', { name: 'a', other: 1 })).toEqual([200, { ok: true }]);
    // Only a body that passed reached a handler.
    expect(seen).toEqual([undefined, { name: 'a', other: 1 }]);
    await probe.close();
  });
});
