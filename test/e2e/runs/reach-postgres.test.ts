import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../../controller/runs/engine/connections.ts';
import type { ResolvedConnection } from '../../../controller/runs/types.ts';
import { allowAll, resolver, runEngine, steps } from '../../controller/runs/engine/harness.ts';
import { findPostgresUser, PG } from '../harness.ts';

/**
 * A shared platform warehouse with two tenants' schemas: a pipeline owned by ACME works in ACME's
 * schema only (named or not), whatever the connection's default schema; an unowned one anywhere.
 */
describe('shared connections pin each tenant to its schema (real PostgreSQL)', () => {
  const prefix = `bi_e2e_reach_${process.pid}_`;
  const acme = `${prefix}acme`;
  const globex = `${prefix}globex`;
  let admin: pg.Client;
  let shared: ResolvedConnection;

  beforeAll(async () => {
    const user = await findPostgresUser();
    admin = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user });
    await admin.connect();
    for (const [schema, ids] of [[acme, [1, 2]], [globex, [7, 8, 9]]] as const) {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE; CREATE SCHEMA "${schema}"`);
      await admin.query(`CREATE TABLE "${schema}".orders (id integer, tenant text)`);
      await admin.query(`INSERT INTO "${schema}".orders SELECT i, '${schema}' FROM unnest($1::int[]) i`, [ids]);
      await admin.query(`CREATE TABLE "${schema}".customers (id integer, name text)`);
      await admin.query(`INSERT INTO "${schema}".customers VALUES (1, 'secret of ${schema}')`);
    }
    // The connection's own default schema is the other tenant's: the pin wins over it.
    shared = { connectionId: 'SHARED', vendor: 'POSTGRESQL', host: PG.host, port: PG.port, database: PG.database, username: user, schema: globex, shared: true, tenantSchema: `${prefix}{clientId}` };
  });
  afterAll(async () => {
    await admin.query(`DROP SCHEMA IF EXISTS "${acme}" CASCADE; DROP SCHEMA IF EXISTS "${globex}" CASCADE`);
    await admin.end();
  });

  const source = { connectionId: 'SHARED', type: 'database' as const };
  const run = (owner: string | null, ...list: Parameters<typeof steps>) => runEngine({ owner, source, connections: resolver({ SHARED: shared }), steps: steps(...list) });

  it('an owned pipeline reads and writes its tenant’s schema: the unnamed table is ACME’s, the load lands there', async () => {
    const { result } = await run(
      'ACME',
      ['source', { connectionId: 'SHARED', tableName: 'orders' }],
      ['db_lookup', { connectionId: 'SHARED', tableName: 'customers', lookupKey: 'id', joinField: 'id', selectFields: 'name' }],
      ['load', { connectionId: 'SHARED', tableName: 'copy' }],
    );
    expect(result.error).toBeNull();
    expect(result).toMatchObject({ status: 'succeeded', rowsRead: 2 });
    expect((await admin.query(`SELECT id, tenant, name FROM "${acme}".copy ORDER BY id`)).rows).toEqual([
      { id: 1, tenant: acme, name: `secret of ${acme}` },
      { id: 2, tenant: acme, name: null },
    ]);
    expect((await admin.query(`SELECT to_regclass('"${globex}".copy') AS r`)).rows).toEqual([{ r: null }]);
  });

  it('naming another tenant’s schema fails the step at run time (source, lookup, load), nothing of it read', async () => {
    const refused = `must be ${acme} (client ACME's schema on shared connection SHARED)`;
    const a = await run('ACME', ['source', { connectionId: 'SHARED', tableName: 'orders', schemaName: globex }]);
    expect(a.result).toMatchObject({ status: 'failed', rowsRead: 0, error: `step source-0 (step-1-0) failed: config.schemaName ${refused}` });
    const b = await run(
      'ACME',
      ['source', { connectionId: 'SHARED', tableName: 'orders' }],
      ['db_lookup', { connectionId: 'SHARED', tableName: 'customers', lookupKey: 'id', joinField: 'id', schemaName: globex }],
    );
    expect(b.result).toMatchObject({ status: 'failed', error: `step db_lookup-1 (step-1-1) failed: config.schemaName ${refused}` });
    const c = await run('ACME', ['source', { connectionId: 'SHARED', tableName: 'orders' }], ['load', { connectionId: 'SHARED', tableName: 'stolen', schemaName: globex }]);
    expect(c.result).toMatchObject({ status: 'failed', error: `step load-1 (step-1-1) failed: config.schemaName ${refused}` });
    expect((await admin.query(`SELECT to_regclass('"${globex}".stolen') AS r`)).rows).toEqual([{ r: null }]);
  });

  it('an unowned (admin-only) pipeline is not pinned: it reads the schema it names', async () => {
    const { result } = await run(null, ['source', { connectionId: 'SHARED', tableName: 'orders', schemaName: globex }]);
    expect(result).toMatchObject({ status: 'succeeded', rowsRead: 3 });
  });

  it('the session’s search_path is the pinned schema: an unqualified name resolves there', async () => {
    const client = await connectPostgres(shared, allowAll, 'reach test', acme);
    try {
      expect((await client.query('SHOW search_path')).rows).toEqual([{ search_path: acme }]);
      expect((await client.query('SELECT tenant FROM orders ORDER BY id')).rows).toEqual([{ tenant: acme }, { tenant: acme }]);
    } finally {
      await client.end();
    }
  });
});
