import type { FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildApp } from '../../../api/app.ts';
import { signBody, verifySignature } from '../../../api/routes/reconciler-webhook.ts';
import { coreModel, makeGitRuntime, Remote, warehouseRemote, type GitTestRuntime } from '../../controller/git/harness.ts';
import { loginAs } from '../../helpers/auth.ts';
import { checkResponses } from '../../helpers/openapi.ts';
import type { TestApp } from '../../helpers/runtime.ts';

const SECRET = 'shh-webhook-secret';
const pushEvent = JSON.stringify({ ref: 'refs/heads/main', after: 'x' });

describe('git mode over HTTP: webhook, status, sync now', () => {
  let remote: Remote;
  let t: GitTestRuntime;
  let app: FastifyInstance;
  let admin: Record<string, string>;

  beforeEach(async () => {
    remote = warehouseRemote();
    t = await makeGitRuntime({ url: remote.url, webhookSecret: SECRET });
    app = checkResponses(await buildApp({ runtime: t.rt }));
    await app.ready();
    admin = (await loginAs({ rt: t.rt, app } as unknown as TestApp, { role: 'admin' })).headers;
  });
  afterEach(async () => {
    await app.close();
    await t.stop();
    remote.dispose();
  });

  const hook = (payload: string, signature?: string, contentType = 'application/json') =>
    app.inject({
      method: 'POST',
      url: '/v1/reconciler/webhook',
      payload,
      headers: { 'content-type': contentType, ...(signature ? { 'x-hub-signature-256': signature } : {}) },
    });

  it('refuses a bad or missing signature with 401 and fetches nothing', async () => {
    remote.write('manifests/core-models/retail.yaml', coreModel('retail'));
    remote.push('add retail');
    for (const sig of [undefined, 'sha256=00', signBody('wrong-secret', pushEvent), signBody(SECRET, `${pushEvent} `)]) {
      const res = await hook(pushEvent, sig);
      expect(res.statusCode).toBe(401);
      expect(res.json()).toEqual({ success: false, error: 'Invalid signature' });
    }
    await t.source.whenIdle();
    expect(t.rt.reconciler.status.get('CoreModel/retail')).toBeUndefined();
  });

  it('a signed hook applies a push at once, without waiting for the poll', async () => {
    remote.write('manifests/core-models/retail.yaml', coreModel('retail'));
    const rev = remote.push('add retail');
    const pollsArmed = t.scheduler.pending;
    const started = performance.now();

    const res = await hook(pushEvent, signBody(SECRET, pushEvent));
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ success: true, accepted: true });
    await t.source.whenIdle();
    const elapsed = performance.now() - started;

    expect(t.rt.reconciler.status.get('CoreModel/retail')).toMatchObject({ phase: 'Synced', lastAppliedRevision: rev });
    expect(t.scheduler.pending).toBe(pollsArmed); // the poll timer never fired
    console.log(`webhook → push applied in ${elapsed.toFixed(0)} ms`);
  });

  it('keeps the raw body whatever its content type (form-encoded GitHub payloads)', async () => {
    const form = `payload=${encodeURIComponent(pushEvent)}`;
    const res = await hook(form, signBody(SECRET, form), 'application/x-www-form-urlencoded');
    expect(res.statusCode).toBe(202);
  });

  it('GET /v1/reconciler/status carries the synced revision', async () => {
    const res = await app.inject({ url: '/v1/reconciler/status?kind=Connection', headers: admin });
    const rev = remote.remoteHead();
    expect(res.json()).toMatchObject({
      success: true,
      revision: rev,
      ready: true,
      pruneBlocked: null,
      items: [{ kind: 'Connection', name: 'wh', phase: 'Synced', lastAppliedRevision: rev, lastAttemptedRevision: rev }],
    });
    expect(res.json().source).toMatchObject({ type: 'git', location: remote.url });
  });

  it('POST /v1/reconciler/sync fetches first, then syncs everything', async () => {
    remote.write('manifests/core-models/retail.yaml', coreModel('retail'));
    const rev = remote.push('add retail');
    const res = await app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: admin, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      revision: rev,
      scanned: 2,
      applied: ['CoreModel/retail'],
      skipped: 1,
      invalid: [],
      pruned: [],
      failed: [],
      pruneBlocked: null,
    });
  });

  it('sync now with an unreachable remote is a 503 with the reason', async () => {
    remote.dispose();
    const res = await app.inject({ method: 'POST', url: '/v1/reconciler/sync', headers: admin, payload: {} });
    expect(res.statusCode).toBe(503);
    expect(res.json().success).toBe(false);
    expect(res.json().error).toMatch(/^git: cannot fetch file:\/\/.*remote\.git \(branch main\): /);
  });
});

describe('webhook signature check', () => {
  it('accepts exactly the HMAC SHA-256 of the raw bytes', () => {
    const body = Buffer.from('{"a":1}');
    const sig = signBody('k', body);
    expect(sig).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(verifySignature('k', body, sig)).toBe(true);
    expect(verifySignature('k', body, sig.toUpperCase())).toBe(false);
    expect(verifySignature('k', Buffer.from('{"a":2}'), sig)).toBe(false);
    expect(verifySignature('k', body, [sig])).toBe(false);
    expect(verifySignature('k', body, undefined)).toBe(false);
  });
});
