import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';

describe('Connection manifests and what runs may reach through them', () => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await makeTestRuntime();
  });
  afterEach(async () => t.close());

  const status = (name: string) => t.rt.reconciler.status.get(`File/connections/${name}.yaml`);
  const stored = () => (t.rt.db.prepare('SELECT COUNT(*) AS n FROM connections').get() as { n: number }).n;

  it('passwordEnv names only a credential variable BI_CONN_[A-Z0-9_]+: the controller’s settings are Invalid, naming the field', async () => {
    for (const [name, env] of [['key', 'BI_SECRET_KEY'], ['admin', 'BI_ADMIN_PASSWORD'], ['lower', 'bi_conn_x'], ['bare', 'BI_CONN_']] as const) {
      t.write(`connections/${name}.yaml`, manifest('Connection', name, { name, vendor: 'POSTGRESQL', host: '127.0.0.1', passwordEnv: env }));
    }
    t.write('connections/ok.yaml', manifest('Connection', 'ok', { name: 'ok', vendor: 'POSTGRESQL', host: '127.0.0.1', passwordEnv: 'BI_CONN_OK_1' }));
    await t.sync();
    for (const name of ['key', 'admin', 'lower', 'bare']) {
      expect(status(name)).toMatchObject({ phase: 'Invalid', message: 'spec.passwordEnv must name a credential variable matching BI_CONN_[A-Z0-9_]+' });
    }
    expect(t.rt.reconciler.status.get('Connection/ok')?.phase).toBe('Synced');
    expect(stored()).toBe(1);
  });

  it('shared: true requires tenantSchema, a schema pattern with {clientId}', async () => {
    t.write('connections/plain.yaml', manifest('Connection', 'plain', { name: 'plain', vendor: 'POSTGRESQL', host: '127.0.0.1', shared: true }));
    t.write('connections/fixed.yaml', manifest('Connection', 'fixed', { name: 'fixed', vendor: 'POSTGRESQL', host: '127.0.0.1', shared: true, tenantSchema: 'tenants' }));
    t.write('connections/good.yaml', manifest('Connection', 'good', { name: 'good', vendor: 'POSTGRESQL', host: '127.0.0.1', shared: true, tenantSchema: 't_{clientId}' }));
    await t.sync();
    expect(t.rt.reconciler.status.get('Connection/plain')).toMatchObject({
      phase: 'Failed',
      message: 'validate: spec.tenantSchema is required when spec.shared is true: a schema pattern with {clientId}, e.g. t_{clientId}',
    });
    expect(status('fixed')).toMatchObject({ phase: 'Invalid', message: 'spec.tenantSchema must be a schema name pattern containing {clientId} once (letters, digits, _), e.g. t_{clientId}' });
    expect(t.rt.reconciler.status.get('Connection/good')?.phase).toBe('Synced');
    expect(t.rt.db.prepare('SELECT shared, tenant_schema FROM connections').all()).toEqual([{ shared: 1, tenant_schema: 't_{clientId}' }]);
  });
});
