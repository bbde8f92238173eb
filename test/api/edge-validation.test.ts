import { afterEach, describe, expect, it } from 'vitest';
import { createUserWithKey, loginAs } from '../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../helpers/runtime.ts';
import Fastify from 'fastify';
import { errorHandler } from '../../api/errors.ts';
import { edgeValidator } from '../../api/validation.ts';

/**
 * The HTTP edge (docs/api.md): path parameters and query strings checked by the route's schema
 * after its guard, and every 400 with a machine-readable `code` and the `problems` by field.
 */
describe('the edge: 400 bodies and validation by the route schemas', () => {
  let t: TestApp;
  afterEach(async () => {
    await t.close();
  });

  it('a bad query value: 400 with the old text, code validation and the problem at query.<name>', async () => {
    t = await makeTestApp();
    const key = await createUserWithKey(t);
    const res = await t.app.inject({ url: '/v1/sdk/pipelines/DP-1/runs?limit=abc&color=blue', headers: key.headers });
    expect(res.statusCode).toBe(400);
    const message = 'limit must be an integer from 1 to 1000';
    expect(res.json()).toEqual({ success: false, message, code: 'validation', problems: [{ path: 'query.limit', message }] });
    // An unknown parameter alone is ignored, as before: the route answers for its pipeline.
    const unknown = await t.app.inject({ url: '/v1/sdk/pipelines/DP-1/runs?color=blue', headers: key.headers });
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { success: false, message: 'Pipeline DP-1 not found' }]);
  });

  it('the guard answers first: no key or no session is a 401 whatever the query or path', async () => {
    t = await makeTestApp();
    const none = await t.app.inject({ url: '/v1/sdk/pipelines/DP-1/runs?limit=abc' });
    expect([none.statusCode, none.json()]).toEqual([401, { error: 'API key required' }]);
    const noSession = await t.app.inject({ method: 'DELETE', url: '/v1/api-keys/U2026A00001/not-a-key' });
    expect([noSession.statusCode, noSession.json()]).toEqual([401, { success: false, error: 'Session required' }]);
    // An unauthenticated body is not even read: 401, not 400 for its malformed JSON.
    const body = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers: { 'content-type': 'application/json' }, payload: '{"name":' });
    expect([body.statusCode, body.json()]).toEqual([401, { error: 'API key required' }]);
  });

  it('a bad path parameter: 400 with the problem at params.<name>; a malformed key ID stays a 404', async () => {
    // The edge's validator and error handler on a route with a patterned path parameter (the workers' runId).
    const probe = Fastify();
    probe.setValidatorCompiler(edgeValidator);
    probe.setErrorHandler(errorHandler);
    probe.get('/runs/:runId', { schema: { params: { type: 'object', properties: { runId: { type: 'string', pattern: '^RUN-\\d+$' } } } } }, async () => ({ ok: true }));
    const res = await probe.inject({ url: '/runs/not-a-run' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ success: false, code: 'validation', problems: [{ path: 'params.runId' }] });
    expect((await probe.inject({ url: '/runs/RUN-7' })).statusCode).toBe(200);
    await probe.close();
    t = await makeTestApp();
    // Key IDs are looked up, not pattern-checked: a malformed one is as unknown as a well-formed one.
    const s = await loginAs(t);
    for (const id of ['not-a-key', 'SK2026A99999']) {
      const unknown = await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${s.userId}/${id}`, headers: s.headers });
      expect([unknown.statusCode, unknown.json()]).toEqual([404, { success: false, error: `API key ${id} not found` }]);
    }
  });

  it('a bad body (not a manifest): the problems by their path in the body, the text as before', async () => {
    t = await makeTestApp();
    const s = await loginAs(t);
    const res = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, headers: s.headers, payload: { label: ' ', expiresAt: 'soon', clientId: 7 } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      error: 'label is required; clientId must be a string; expiresAt must be an ISO 8601 date-time',
      code: 'validation',
      problems: [
        { path: 'label', message: 'is required' },
        { path: 'clientId', message: 'must be a string' },
        { path: 'expiresAt', message: 'must be an ISO 8601 date-time' },
      ],
    });
  });

  it('a manifest body: the SchemaRegistry’s problems, paths inside the body, each message without its path in front', async () => {
    t = await makeTestApp();
    const key = await createUserWithKey(t);
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: key.headers, payload: { clientId: 'ACME', clientName: 'Acme', vdm: [{ name: 'v', securityEnabled: 'yes' }] } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({
      success: false,
      error: 'Validation failed: connectionId is required; coreModelId is required; vdm[0].securityEnabled must be boolean',
      code: 'validation',
      problems: [
        { path: 'connectionId', message: 'is required' },
        { path: 'coreModelId', message: 'is required' },
        { path: 'vdm[0].securityEnabled', message: 'must be boolean' },
      ],
    });
  });

  it('malformed JSON, an empty body, an unsupported media type and a body over the limit: each its code, no problems', async () => {
    t = await makeTestApp();
    const key = await createUserWithKey(t);
    const post = (headers: Record<string, string>, payload: string) => t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers: { ...key.headers, ...headers }, payload });
    const json = { 'content-type': 'application/json' };
    const malformed = await post(json, '{"name":');
    expect([malformed.statusCode, malformed.json()]).toEqual([400, { success: false, error: expect.stringMatching(/^Malformed JSON body: /), code: 'malformed_json' }]);
    const empty = await post(json, '');
    expect([empty.statusCode, empty.json()]).toEqual([400, { success: false, error: 'Request body is empty', code: 'empty_body' }]);
    const text = await post({ 'content-type': 'application/xml' }, '<a/>');
    expect([text.statusCode, text.json()]).toEqual([415, { success: false, error: 'Unsupported content type: send application/json', code: 'unsupported_media_type' }]);
    const big = await post(json, JSON.stringify({ a: 'x'.repeat(t.rt.config.bodyLimit) }));
    expect([big.statusCode, big.json()]).toEqual([413, { success: false, error: 'Request body is larger than the limit', code: 'body_too_large' }]);
  });

  it('the document states the guard the route runs: every operation with a security requirement refuses an anonymous call', async () => {
    t = await makeTestApp();
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { security?: unknown[] }>> };
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const url = path.replace(/\{userId\}/g, 'U2026A00001').replace(/\{[^}]+\}/g, 'X');
        const res = await t.app.inject({ method: method.toUpperCase() as 'GET', url, ...(method === 'get' ? {} : { headers: { 'content-type': 'application/json' }, payload: '{}' }) });
        // A public route may answer 401 of its own (refresh without a token, a bad webhook signature).
        if ((op.security ?? []).length > 0) expect(res.statusCode, `${method} ${path}`).toBe(401);
      }
    }
  });
});
