import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { requireApiKey, requireSession } from '../../../api/auth/guards.ts';
import { createUserWithKey, loginAs } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';

describe('auth seam', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(async () => {
    await t.close();
  });

  it('helpers give working A and S credentials', async () => {
    const k = await createUserWithKey(t, { clientId: 'acme' });
    const s = await loginAs(t, { role: 'member' });
    expect(k.apiKey).toMatch(/^bictl_sk_[0-9a-f]{64}$/);
    const r = await t.app.inject({ method: 'GET', url: `/v1/api-keys/${s.userId}`, headers: s.headers });
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ success: true, keys: [] });
    expect(requireApiKey).toBeTypeOf('function');
    expect(requireSession).toBeTypeOf('function');
  });
});
