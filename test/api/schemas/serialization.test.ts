import { afterEach, describe, expect, it, vi } from 'vitest';
import { authFor } from '../../../controller/auth/runtime-auth.ts';
import { loginAs } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';

type Json = Record<string, unknown>;

/** Names no response may carry: hashes, passwords, secret values (a `secretRef` only names a secret). */
const NEVER_SENT = /hash|password|^secret$|secretValue|ciphertext|sessionId/i;

describe('response schemas as serialization guards', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('never sends a field the response schema does not declare: a key hash a handler lets through stays home', async () => {
    t = await makeTestApp();
    const s = await loginAs(t, { role: 'admin' });
    await t.app.inject({ method: 'POST', url: `/v1/api-keys/${s.userId}`, headers: s.headers, payload: { label: 'ci' } });
    const auth = authFor(t.rt);
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
