import { afterEach, describe, expect, it, vi } from 'vitest';
import { createUserWithKey, loginAs } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';

type Json = Record<string, unknown>;

/** Names no response may carry: hashes, passwords, secret values (a `secretRef` only names a secret). */
// A password or key hash is never sent; the audit log's chain hashes (`hash`, `prevHash` of an entry) are public by design.
const NEVER_SENT = /^(?!(hash|prevHash)$).*hash|password|^secret$|secretValue|ciphertext|sessionId/i;

describe('response schemas as serialization guards', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('never sends a field the response schema does not declare: a key hash a handler lets through stays home', async () => {
    t = await makeTestApp();
    const s = await loginAs(t, { role: 'admin' });
    await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, headers: s.headers, payload: { label: 'ci' } });
    const auth = t.rt.auth;
    const real = auth.listKeys.bind(auth);
    vi.spyOn(auth, 'listKeys').mockImplementation((userId) => real(userId).map((k) => ({ ...k, keyHash: 'f'.repeat(64), key_hash: 'f'.repeat(64), userId })));
    const res = await t.app.inject({ method: 'GET', url: `/v1/api-keys/${s.userId}`, headers: s.headers });
    expect(res.statusCode).toBe(200);
    expect(res.body).not.toContain('f'.repeat(64));
    expect(Object.keys((res.json() as { keys: Json[] }).keys[0]).sort()).toEqual(['clientId', 'createdAt', 'expiresAt', 'keyId', 'keyPrefix', 'label', 'lastUsedAt', 'revoked']);
  });

  it('no response of the document declares a hash, a password or a secret value', async () => {
    t = await makeTestApp();
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, { responses: Json }>>; components: { schemas: Json } };
    const names: string[] = [];
    const seen = new Set<string>();
    const visit = (node: unknown): void => {
      if (!node || typeof node !== 'object') return;
      if (Array.isArray(node)) return node.forEach(visit);
      const n = node as Json;
      if (typeof n.$ref === 'string' && !seen.has(n.$ref)) {
        seen.add(n.$ref);
        visit(n.$ref.slice(2).split('/').reduce<unknown>((o, k) => (o as Json | undefined)?.[k], doc));
      }
      if (n.properties && typeof n.properties === 'object') names.push(...Object.keys(n.properties));
      Object.values(n).forEach(visit);
    };
    for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) visit(op.responses);
    expect(names).toContain('keyPrefix');
    expect(names.filter((n) => NEVER_SENT.test(n))).toEqual([]);
  });
});

describe('response schemas declare every field the routes send', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it("an onboarded client's status and audit carry all its resource IDs and flags", async () => {
    t = await makeTestApp();
    writeCoreModel(t);
    await t.sync();
    const key = await createUserWithKey(t);
    const onboarded = await t.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: key.headers, payload: packageWithDashboard('ACME') });
    expect(onboarded.statusCode).toBe(201);
    const stored = t.rt.reconciler.status.get('Client/ACME')?.resourceIds;
    expect(stored).toMatchObject({ connectionCreated: expect.any(Boolean), vdmIds: expect.any(Array) });
    const admin = await loginAs(t, { role: 'admin' });
    const status = await t.app.inject({ url: '/v1/reconciler/status?kind=Client', headers: admin.headers });
    expect(status.json().items[0].resourceIds).toEqual(stored);
    const audit = await t.app.inject({ url: `/v1/bi/admin/clients/ACME/audit/${admin.userId}`, headers: admin.headers });
    expect(audit.json().manifest.resourceIds).toEqual(stored);
  });
});
