import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../helpers/runtime.ts';

describe('health and generic HTTP behaviour', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(async () => t.close());

  it('serves /healthz and /readyz after the first sync', async () => {
    expect((await t.app.inject({ url: '/healthz' })).json()).toEqual({ status: 'ok' });
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', ready: true });
  });

  it('answers unknown routes with a JSON 404', async () => {
    const res = await t.app.inject({ url: '/v1/nothing-here' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ success: false, error: 'Route GET /v1/nothing-here not found' });
  });

  it('answers a malformed JSON body with a JSON 400, never a 500', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/healthz', headers: { 'content-type': 'application/json' }, payload: '{bad' });
    expect(res.statusCode).toBe(400);
    expect(res.json().success).toBe(false);
    expect(res.json().error).toMatch(/^Malformed JSON body/);
  });

  it('answers a body over 1 MiB with a JSON 413', async () => {
    const big = JSON.stringify({ a: 'x'.repeat(1024 * 1024 + 10) });
    const res = await t.app.inject({ method: 'POST', url: '/healthz', headers: { 'content-type': 'application/json' }, payload: big });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ success: false, error: 'Request body is larger than the limit', code: 'body_too_large' });
  });
});
