import { afterEach, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../controller/audit/canonical.ts';
import { sha256 } from '../../../controller/hash.ts';
import { loginAs } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';

let t: TestApp;
afterEach(async () => t?.close());

describe('the audit log: user changes made through the API', () => {
  it('user.create and user.update name the admin who made them (actor user), not the controller; before/after are digests', async () => {
    t = await makeTestApp();
    const admin = await loginAs(t, { username: 'root', role: 'admin' });
    const created = await t.app.inject({
      method: 'POST',
      url: `/v1/bi/admin/users/${admin.userId}`,
      headers: admin.headers,
      payload: { username: 'mia', password: 'Member-pass-123!', role: 'member' },
    });
    expect(created.statusCode).toBe(201);
    const mia = created.json().user.userId as string;
    const patched = await t.app.inject({ method: 'PATCH', url: `/v1/bi/admin/users/${mia}/${admin.userId}`, headers: admin.headers, payload: { disabled: true } });
    expect(patched.statusCode).toBe(200);
    const entries = (await t.app.inject({ url: `/v1/bi/admin/audit/${admin.userId}?order=asc&limit=1000`, headers: admin.headers })).json().entries as {
      action: string;
      actor: { type: string; id: string };
      object?: { id: string };
      before?: string;
      after?: string;
    }[];
    const of = (action: string) => entries.find((e) => e.action === action && e.object?.id === mia);
    expect(of('user.create')?.actor).toEqual({ type: 'user', id: admin.userId });
    expect(of('user.update')?.actor).toEqual({ type: 'user', id: admin.userId });
    // before/after are digests (of {disabled, role}), never the values themselves.
    expect(of('user.create')?.after).toBe(sha256(canonicalJson({ disabled: false, role: 'member' })));
    expect(of('user.update')).toMatchObject({
      before: sha256(canonicalJson({ disabled: false, role: 'member' })),
      after: sha256(canonicalJson({ disabled: true, role: 'member' })),
    });
  });
});

describe('the audit log: key changes made through the API', () => {
  it('key.revoke names the admin who revoked it and the key’s client', async () => {
    t = await makeTestApp();
    const admin = await loginAs(t, { username: 'root', role: 'admin' });
    t.rt.db.prepare("INSERT INTO clients (client_id, client_name, status, onboarded_date, last_modified_date) VALUES ('ACME', 'Acme', 'ACTIVE', 'x', 'x')").run();
    const created = await t.app.inject({ method: 'POST', url: `/v1/api-keys/${admin.userId}`, headers: admin.headers, payload: { label: 'k', clientId: 'ACME' } });
    expect(created.statusCode).toBe(201);
    const keyId = created.json().keyId as string;
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/api-keys/${admin.userId}/${keyId}`, headers: admin.headers })).statusCode).toBe(200);
    const entries = (await t.app.inject({ url: `/v1/bi/admin/audit/${admin.userId}?action=key.revoke`, headers: admin.headers })).json().entries;
    expect(entries).toEqual([expect.objectContaining({ actor: { type: 'user', id: admin.userId }, clientId: 'ACME', object: { kind: 'ApiKey', id: keyId } })]);
  });
});
