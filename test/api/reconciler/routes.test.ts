import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loginAs } from '../../helpers/auth.ts';
import { manifest, makeTestApp, type TestApp } from '../../helpers/runtime.ts';

const coreModel = (name: string) => manifest('CoreModel', name, { name, definition: {} });
const connection = (name: string) => manifest('Connection', name, { name, vendor: 'SNOWFLAKE', passwordEnv: 'BI_CONN_PW' });

describe('reconciler routes (directory mode)', () => {
  let t: TestApp;
  let admin: Record<string, string>;
  let member: Record<string, string>;
  beforeEach(async () => {
    t = await makeTestApp();
    admin = (await loginAs(t, { role: 'admin' })).headers;
    member = (await loginAs(t, { role: 'member' })).headers;
    t.write('core-models/retail.yaml', coreModel('retail'));
    t.write('connections/wh.yaml', connection('wh'));
    t.write('broken.yaml', 'kind: Client\nmetadata: {name: B}\n');
    await t.sync();
  });
  afterEach(async () => t.close());

  it('GET /v1/reconciler/status: every manifest with phase, revisions, retries and resources', async () => {
    const res = await t.app.inject({ url: '/v1/reconciler/status', headers: admin });
    expect(res.statusCode).toBe(200);
    const at = '2026-03-01T10:00:00.000Z';
    const body = res.json();
    expect(body).toEqual({
      success: true,
      revision: null,
      source: { type: 'directory', location: t.manifests },
      ready: true,
      pruneBlocked: null,
      items: [
        {
          key: 'File/broken.yaml',
          kind: 'Client',
          name: 'B',
          path: 'broken.yaml',
          phase: 'Invalid',
          reason: 'schema',
          message: expect.stringContaining('apiVersion'),
          attempts: 0,
          nextRetryAt: null,
          resourceIds: {},
          lastAppliedRevision: null,
          lastAttemptedRevision: null,
          lastTransitionAt: at,
          generatedBy: null,
          inputId: null,
        },
        {
          key: 'Connection/wh',
          kind: 'Connection',
          name: 'wh',
          path: 'connections/wh.yaml',
          phase: 'Synced',
          reason: null,
          message: '',
          attempts: 0,
          nextRetryAt: null,
          resourceIds: body.items[1].resourceIds,
          lastAppliedRevision: null,
          lastAttemptedRevision: null,
          lastTransitionAt: at,
          generatedBy: null,
          inputId: null,
        },
        {
          key: 'CoreModel/retail',
          kind: 'CoreModel',
          name: 'retail',
          path: 'core-models/retail.yaml',
          phase: 'Synced',
          reason: null,
          message: '',
          attempts: 0,
          nextRetryAt: null,
          resourceIds: body.items[2].resourceIds,
          lastAppliedRevision: null,
          lastAttemptedRevision: null,
          lastTransitionAt: at,
          generatedBy: null,
          inputId: null,
        },
      ],
    });
    expect(Object.keys(body.items[1].resourceIds)).not.toHaveLength(0);
    expect(Object.keys(body.items[2].resourceIds)).not.toHaveLength(0);
  });

  it('filters by kind and phase', async () => {
    const byKind = await t.app.inject({ url: '/v1/reconciler/status?kind=CoreModel', headers: admin });
    expect(byKind.json().items.map((i: { name: string }) => i.name)).toEqual(['retail']);
    const byPhase = await t.app.inject({ url: '/v1/reconciler/status?phase=Invalid', headers: admin });
    expect(byPhase.json().items.map((i: { name: string }) => i.name)).toEqual(['B']);
    const both = await t.app.inject({ url: '/v1/reconciler/status?kind=Connection&phase=Failed', headers: admin });
    expect(both.json().items).toEqual([]);
  });

  it('answers a bad filter with 400 naming the allowed values', async () => {
    const res = await t.app.inject({ url: '/v1/reconciler/status?kind=Nope&phase=Done', headers: admin });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      error: 'kind must be one of ClientSet, CoreModel, Connection, Notifier, Client, Dashboard, Pipeline; phase must be one of Pending, Synced, Failed, Invalid, Pruned',
      code: 'validation',
      problems: expect.any(Array),
    });
  });

  it('needs a session and its CSRF token', async () => {
    const res = await t.app.inject({ url: '/v1/reconciler/status' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ success: false, error: 'Session required' });
    const noCtn = await t.app.inject({ url: '/v1/reconciler/status', headers: { cookie: member.cookie } });
    expect(noCtn.statusCode).toBe(403);
    expect(noCtn.json()).toEqual({ success: false, error: 'Invalid CSRF token' });
  });

  it('POST /v1/reconciler/sync (admin) runs a full sync and answers the report', async () => {
    t.write('core-models/extra.yaml', coreModel('extra'));
    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: admin, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      revision: null,
      scanned: 4,
      applied: ['CoreModel/extra'],
      skipped: 2,
      invalid: ['File/broken.yaml'],
      pruned: [],
      failed: [],
      pruneBlocked: null,
    });
  });

  it('sync: a mass prune is refused until confirmed with allowMassPrune', async () => {
    t.remove('core-models/retail.yaml');
    t.remove('connections/wh.yaml');
    const refused = await t.app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: admin, payload: {} });
    expect(refused.json().pruneBlocked).toMatchObject({ keys: ['Connection/wh', 'CoreModel/retail'], live: 2 });
    expect(refused.json().pruned).toEqual([]);
    const confirmed = await t.app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: admin, payload: { allowMassPrune: true } });
    expect(confirmed.json().pruneBlocked).toBeNull();
    expect([...confirmed.json().pruned].sort()).toEqual(['Connection/wh', 'CoreModel/retail']);
  });

  it('sync: members are refused, a bad body is a 400', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: member, payload: {} });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({ success: false, error: 'Admin role required' });
    const bad = await t.app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: admin, payload: { allowMassPrune: 'yes' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ success: false, error: 'allowMassPrune must be boolean', code: 'validation', problems: expect.any(Array) });
  });

  it('the webhook is not there in directory mode', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/reconciler/webhook', payload: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ success: false, error: 'Git mode is not enabled (set BI_GIT_URL)' });
  });

  it('GET /v1/reconciler/events streams each reconcile event and drops the listener on disconnect', async () => {
    const anonymous = await t.app.inject({ url: '/v1/reconciler/events' });
    expect(anonymous.statusCode).toBe(401);
    const baseline = t.rt.reconciler.listenerCount('event');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    const chunks: string[] = [];
    let contentType = '';
    // Like every S endpoint it needs the CSRF token: a browser's EventSource, which cannot set
    // headers, sends it as ?ctn=.
    const noToken = await t.app.inject({ url: '/v1/reconciler/events', headers: { cookie: admin.cookie } });
    expect(noToken.statusCode).toBe(403);
    expect(noToken.json()).toEqual({ success: false, error: 'Invalid CSRF token' });
    const req = request({
      host: '127.0.0.1',
      port,
      path: `/v1/reconciler/events?ctn=${encodeURIComponent(admin.ctn)}`,
      headers: { cookie: admin.cookie },
    });
    req.on('response', (res) => {
      contentType = String(res.headers['content-type']);
      res.setEncoding('utf8');
      res.on('data', (c: string) => chunks.push(c));
    });
    req.end();
    await waitFor(() => chunks.join('').includes(': connected'));
    expect(t.rt.reconciler.listenerCount('event')).toBe(baseline + 1);

    t.write('core-models/extra.yaml', coreModel('extra'));
    await t.sync();
    await waitFor(() => chunks.join('').includes('"phase":"Synced"'));
    const events = chunks
      .join('')
      .split('\n\n')
      .filter((b) => b.startsWith('data: '))
      .map((b) => JSON.parse(b.slice(6)));
    expect(contentType).toBe('text/event-stream; charset=utf-8');
    expect(events.at(-1)).toEqual({
      type: 'phase',
      key: 'CoreModel/extra',
      kind: 'CoreModel',
      name: 'extra',
      phase: 'Synced',
      reason: null,
      message: '',
      revision: null,
      at: '2026-03-01T10:00:00.000Z',
      durationMs: expect.any(Number) as unknown,
    });
    expect(events.some((e) => e.type === 'step' && e.key === 'CoreModel/extra')).toBe(true);

    req.destroy();
    await waitFor(() => t.rt.reconciler.listenerCount('event') === baseline);
  });

  it('closing the app ends open event streams', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = t.app.server.address() as AddressInfo;
    let ended = false;
    const listeners = t.rt.reconciler.listenerCount('event');
    const req = request({ host: '127.0.0.1', port, path: '/v1/reconciler/events', headers: admin });
    req.on('response', (res) => {
      res.on('data', () => {});
      res.on('end', () => (ended = true));
    });
    req.on('error', () => {});
    req.end();
    await waitFor(() => t.rt.reconciler.listenerCount('event') > listeners);
    await t.app.close();
    await waitFor(() => ended);
  });
});

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}
