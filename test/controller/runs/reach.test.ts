import { describe, expect, it } from 'vitest';
import { credentialOrigin, passwordEnvRefusal, RunReach, tenantSchemaOf, type ReachConnection } from '../../../controller/runs/reach.ts';

const api: ReachConnection = { connectionId: 'A', vendor: 'SNOWFLAKE', accountUrl: 'https://api.shop.example/v2/' };
const acme = new RunReach({ owner: 'ACME', filesRoot: '/srv/files' });
const admin = new RunReach({ owner: null, filesRoot: '/srv/files' });

describe('RunReach: what a run may reach', () => {
  it('a credential goes to its connection’s origin only: scheme, host and port all count', () => {
    expect(credentialOrigin(api)).toBe('https://api.shop.example');
    expect(acme.credentialRefusal(api, new URL('https://api.shop.example/orders'))).toBeUndefined();
    expect(acme.credentialRefusal(api, new URL('https://api.shop.example:443/x'))).toBeUndefined();
    for (const other of ['http://api.shop.example/orders', 'https://api.shop.example:8443/orders', 'https://evil.example/api.shop.example', 'https://api.shop.example.evil.example/']) {
      expect(acme.credentialRefusal(api, new URL(other))).toBe(`${new URL(other).origin} is not the address of connection A (https://api.shop.example): its credential is sent only there`);
    }
    // A scheme-less account URL is https; a database connection has no HTTP address at all.
    expect(credentialOrigin({ connectionId: 'S', vendor: 'SNOWFLAKE', accountUrl: 'acme.snowflakecomputing.com' })).toBe('https://acme.snowflakecomputing.com');
    for (const db of [
      { connectionId: 'P', vendor: 'POSTGRESQL', accountUrl: 'http://db.internal:5432' },
      { connectionId: 'W', vendor: 'SNOWFLAKE', accountUrl: 'https://acme.snowflakecomputing.com', database: 'SALES' },
    ] as ReachConnection[]) {
      expect(credentialOrigin(db)).toBeUndefined();
      expect(admin.credentialRefusal(db, new URL(db.accountUrl as string))).toBe(`connection ${db.connectionId} is a database connection: its password is never sent over HTTP`);
    }
  });

  it('an endpoint resolves against the connection’s address as the api source does: relative stays, absolute and //host leave', () => {
    expect(acme.endpointRefusal(api, 'orders', 'source.config.endpoint')).toBeUndefined();
    expect(acme.endpointRefusal(api, '/orders', 'source.config.endpoint')).toBeUndefined();
    expect(acme.endpointRefusal(api, '//evil.example/x', 'source.config.endpoint')).toMatch(/^source\.config\.endpoint https:\/\/evil\.example is not the address/);
  });

  it('passwordEnv: BI_CONN_ and upper-case letters, digits, _ only', () => {
    expect(passwordEnvRefusal('BI_CONN_ACME_1')).toBeUndefined();
    for (const name of ['BI_SECRET_KEY', 'BI_ADMIN_PASSWORD', 'BI_METRICS_TOKEN', 'BI_CONN_', 'bi_conn_x', 'BI_CONN_A-B', 'XBI_CONN_A']) expect(passwordEnvRefusal(name)).toBeDefined();
  });

  it('a shared connection pins the owner’s schema (lowercased); unowned pipelines and unshared connections are not pinned', () => {
    const shared: ReachConnection & { schema?: string } = { connectionId: 'W', vendor: 'POSTGRESQL', shared: true, tenantSchema: 't_{clientId}', schema: 'public' };
    expect(tenantSchemaOf('t_{clientId}_x', 'ACME-2')).toBe('t_acme-2_x');
    expect(acme.pinnedSchema(shared)).toBe('t_acme');
    expect(acme.schemaFor(shared, undefined, 'config.schemaName')).toBe('t_acme');
    expect(acme.schemaFor(shared, 't_acme', 'config.schemaName')).toBe('t_acme');
    expect(() => acme.schemaFor(shared, 'public', 'config.schemaName')).toThrow("config.schemaName must be t_acme (client ACME's schema on shared connection W)");
    expect(admin.schemaFor(shared, 't_globex', 'config.schemaName')).toBe('t_globex');
    expect(admin.schemaFor(shared, undefined, 'config.schemaName')).toBe('public');
    expect(acme.schemaFor({ ...shared, shared: false }, 'anything', 'config.schemaName')).toBe('anything');
    expect(acme.schemaRefusal({ ...shared, tenantSchema: undefined }, undefined, 'x')).toBe("connection W is shared without tenantSchema: client ACME's pipelines may not use it");
  });

  it('files: the owner’s folder, or the whole root for an unowned pipeline', () => {
    expect(acme.filesDir()).toBe('/srv/files/ACME');
    expect(admin.filesDir()).toBe('/srv/files');
  });
});
