import { afterEach, describe, expect, it } from 'vitest';
import { createUserWithKey, loginAs } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { clientManifest, packageWithDashboard, writeCoreModel } from '../../controller/kinds/client/fixtures.ts';

let t: TestApp;
afterEach(async () => t?.close());

describe('the audit log: writes made with an API key', () => {
  it('name the key (actor {type: key, id: keyId}), not its owner', async () => {
    t = await makeTestApp();
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard('ACME', { connectionId: 'D2026A00001' })));
    await t.sync();
    const key = await createUserWithKey(t, { role: 'admin', clientId: 'ACME' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/sdk/import-pipeline',
      headers: key.headers,
      payload: {
        name: 'Key pipe',
        source: { connectionId: 'D2026A00001', type: 'database', config: { schemaName: 'public', tableName: 't' } },
        destination: { connectionId: 'D2026A00001', schemaName: 'public' },
        steps: [],
      },
    });
    expect(res.statusCode).toBe(201);
    const admin = await loginAs(t, { role: 'admin', username: 'auditor' });
    const entries = (await t.app.inject({ url: `/v1/bi/admin/audit/${admin.userId}?action=apply&limit=1000`, headers: admin.headers })).json().entries as {
      actor: { type: string; id: string };
      object?: { kind: string };
    }[];
    const write = entries.find((e) => e.object?.kind === 'Pipeline');
    expect(write?.actor).toEqual({ type: 'key', id: key.keyId });
  });
});
