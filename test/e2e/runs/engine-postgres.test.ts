import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { filesFolder, resolver, runEngine, steps } from '../../controller/runs/engine/harness.ts';
import { type PgSchema, pgSchema } from './pg.ts';

let db: PgSchema;
beforeEach(async () => {
  db = await pgSchema();
});
afterEach(async () => {
  await db.drop();
});

const source = { connectionId: 'PG', type: 'database' as const };
const run = (...list: Parameters<typeof steps>) => runEngine({ source, connections: resolver({ PG: db.conn }), steps: steps(...list) });

async function seedOrders(n = 5): Promise<void> {
  await db.client.query(`CREATE TABLE "${db.schema}".orders (id integer, email text, amount text, day date)`);
  await db.client.query(
    `INSERT INTO "${db.schema}".orders SELECT i, CASE WHEN i = 2 THEN 'bad' ELSE 'u' || i || '@x.io' END, CASE WHEN i = 3 THEN 'abc' ELSE (i * 10)::text END, DATE '2026-01-01' + i FROM generate_series(1, ${n}) i`,
  );
}

describe('engine against PostgreSQL: database source → transform → validate → load', () => {
  it('streams the table, loads the rows into a created table with inferred column types, counts add up', async () => {
    await seedOrders(5);
    const { result, rejects } = await run(
      ['source', { connectionId: 'PG', tableName: 'orders' }],
      ['transform', { fieldMappings: [{ source: 'amount', target: 'total' }], rules: [{ field: 'total', rule: 'to_integer' }] }],
      ['validate', { rules: [{ field: 'email', rule: 'email' }] }],
      ['load', { connectionId: 'PG', tableName: 'orders_out' }],
    );
    expect(result.error).toBeNull();
    expect(result).toMatchObject({ status: 'succeeded', rowsRead: 5, rowsRejected: 2, rowsWritten: 3 });
    expect(result.steps.map((s) => [s.status, s.rowsIn, s.rowsOut, s.rowsRejected])).toEqual([
      ['succeeded', 5, 5, 0],
      ['succeeded', 5, 4, 1],
      ['succeeded', 4, 3, 1],
      ['succeeded', 3, 3, 0],
    ]);
    expect(result.steps[3]?.message).toBe(`replace ${db.schema}.orders_out (created): id integer, email text, day date, total integer`);
    expect(rejects.map((r) => r.reasons)).toEqual([['to_integer: total = "abc" does not convert to an integer'], ['email: email = "bad" is not an email address']]);
    const cols = await db.rows(`SELECT column_name, data_type FROM information_schema.columns WHERE table_schema = '${db.schema}' AND table_name = 'orders_out' ORDER BY ordinal_position`);
    expect(cols).toEqual([
      { column_name: 'id', data_type: 'integer' },
      { column_name: 'email', data_type: 'text' },
      { column_name: 'day', data_type: 'date' },
      { column_name: 'total', data_type: 'integer' },
    ]);
    expect(await db.rows(`SELECT id, email, total, day::text AS day FROM "${db.schema}".orders_out ORDER BY id`)).toEqual([
      { id: 1, email: 'u1@x.io', total: 10, day: '2026-01-02' },
      { id: 4, email: 'u4@x.io', total: 40, day: '2026-01-05' },
      { id: 5, email: 'u5@x.io', total: 50, day: '2026-01-06' },
    ]);
  });

  it('replace (default): the table equals this run’s rows; append adds; merge upserts on primaryKey and keeps absent rows', async () => {
    await seedOrders(3);
    const load = async (config: Record<string, unknown>) => (await run(['source', { connectionId: 'PG', tableName: 'orders' }], ['load', { connectionId: 'PG', tableName: 'out', ...config }])).result;
    expect((await load({})).status).toBe('succeeded');
    expect((await load({ mode: 'replace' })).status).toBe('succeeded');
    expect(await db.rows(`SELECT count(*)::int AS n FROM "${db.schema}".out`)).toEqual([{ n: 3 }]);
    expect((await load({ mode: 'append' })).status).toBe('succeeded');
    expect(await db.rows(`SELECT count(*)::int AS n FROM "${db.schema}".out`)).toEqual([{ n: 6 }]);

    const merged = await load({ mode: 'merge', primaryKey: 'id', tableName: 'merged' });
    expect(merged.status).toBe('succeeded');
    await db.client.query(`UPDATE "${db.schema}".orders SET email = 'changed@x.io' WHERE id = 1`);
    await db.client.query(`DELETE FROM "${db.schema}".orders WHERE id = 2`);
    await db.client.query(`INSERT INTO "${db.schema}".orders VALUES (9, 'new@x.io', '90', '2026-02-01')`);
    expect((await load({ mode: 'merge', primaryKey: ['id'], tableName: 'merged' })).status).toBe('succeeded');
    expect(await db.rows(`SELECT id, email FROM "${db.schema}".merged ORDER BY id`)).toEqual([
      { id: 1, email: 'changed@x.io' },
      { id: 2, email: 'bad' },
      { id: 3, email: 'u3@x.io' },
      { id: 9, email: 'new@x.io' },
    ]);
  });

  it('a schema mismatch with an existing table fails naming the column; the table is unchanged', async () => {
    await seedOrders(3);
    await db.client.query(`CREATE TABLE "${db.schema}".target (id integer, email text, amount integer)`);
    await db.client.query(`INSERT INTO "${db.schema}".target VALUES (100, 'keep@x.io', 1)`);
    const missing = await run(['source', { connectionId: 'PG', tableName: 'orders' }], ['load', { connectionId: 'PG', tableName: 'target' }]);
    expect(missing.result.status).toBe('failed');
    expect(missing.result.error).toBe(`step load-1 (step-1-1) failed: Schema mismatch on ${db.schema}.target: column day does not exist in the table`);
    const badType = await run(
      ['source', { connectionId: 'PG', tableName: 'orders' }],
      ['transform', { fieldMappings: [{ source: 'day', target: 'unused' }] }],
      ['quality', { rules: [] }],
      ['load', { connectionId: 'PG', tableName: 'target', mode: 'append' }],
    );
    expect(badType.result.error).toMatch(/Schema mismatch on .*\.target: column (amount is integer, value "abc" does not fit|unused does not exist in the table)/);
    expect(await db.rows(`SELECT * FROM "${db.schema}".target`)).toEqual([{ id: 100, email: 'keep@x.io', amount: 1 }]);
  });

  it('atomic: a failure after rows were copied (a later step) leaves the destination exactly as before', async () => {
    await seedOrders(20);
    await db.client.query(`CREATE TABLE "${db.schema}".dest AS SELECT * FROM "${db.schema}".orders WHERE id <= 2`);
    const { result } = await runEngine(
      {
        source,
        connections: resolver({ PG: db.conn }),
        steps: steps(
          ['source', { connectionId: 'PG', tableName: 'orders' }],
          ['load', { connectionId: 'PG', tableName: 'dest' }],
          ['quality', { rules: [{ field: 'missing', rule: 'completeness_check', params: { threshold: 1 } }] }],
        ),
      },
      { batchSize: 5 },
    );
    expect(result.status).toBe('failed');
    expect(result.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'failed']);
    expect(result.steps[1]?.message).toMatch(/rolled back: the run failed/);
    expect(await db.rows(`SELECT id FROM "${db.schema}".dest ORDER BY id`)).toEqual([{ id: 1 }, { id: 2 }]);
    const created = await runEngine({
      source,
      connections: resolver({ PG: db.conn }),
      steps: steps(['source', { connectionId: 'PG', tableName: 'orders' }], ['load', { connectionId: 'PG', tableName: 'fresh' }], ['validate', { rules: [{ field: 'x', rule: 'regex', params: { pattern: '(?=x)' } }] }]),
    });
    expect(created.result.status).toBe('failed');
    expect(await db.rows(`SELECT to_regclass('"${db.schema}".fresh')::text AS t`)).toEqual([{ t: null }]);
  });

  it('atomic: a cancel during the load rolls it back and answers cancelled', async () => {
    await seedOrders(50);
    await db.client.query(`CREATE TABLE "${db.schema}".dest (id integer, email text, amount text, day date)`);
    await db.client.query(`INSERT INTO "${db.schema}".dest VALUES (1, 'old', '1', '2020-01-01')`);
    const ac = new AbortController();
    let batches = 0;
    const { result } = await runEngine(
      {
        source,
        signal: ac.signal,
        connections: resolver({ PG: db.conn }),
        steps: steps(['source', { connectionId: 'PG', tableName: 'orders' }], ['load', { connectionId: 'PG', tableName: 'dest' }]),
        hooks: undefined,
      },
      {
        batchSize: 10,
        clock: () => {
          if (++batches === 12) ac.abort();
          return batches;
        },
      },
    );
    expect(result.status).toBe('cancelled');
    expect(await db.rows(`SELECT id, email FROM "${db.schema}".dest`)).toEqual([{ id: 1, email: 'old' }]);
  });

  it('reconcile checks inside the load transaction: counts, completeness, screen map; a failing check rolls the load back', async () => {
    await seedOrders(4);
    const ok = await run(
      ['source', { connectionId: 'PG', tableName: 'orders' }],
      ['transform', { fieldMappings: [{ source: 'email', target: 'mail' }] }],
      ['validate', { rules: [{ field: 'mail', rule: 'email' }] }],
      ['load', { connectionId: 'PG', tableName: 'rec' }],
      ['reconcile', { compareRowCounts: true, checkFieldCompleteness: true, screenMapEnabled: true }],
    );
    expect(ok.result.status).toBe('succeeded');
    expect(ok.result.steps[4]).toMatchObject({
      status: 'succeeded',
      rowsIn: 3,
      rowsOut: 3,
      message: 'compareRowCounts passed, checkFieldCompleteness passed, screenMapEnabled passed',
      checks: {
        compareRowCounts: { passed: true, rowsRead: 4, rowsRejected: 1, expected: 3, actual: 3 },
        checkFieldCompleteness: { passed: true, fields: { id: 1, amount: 1, day: 1, mail: 1 } },
        screenMapEnabled: { passed: true, mappingSource: 'default', fields: ['mail'], missing: [] },
      },
    });
    await db.client.query(`CREATE TABLE "${db.schema}".narrow (id integer, email text, amount text, day date)`);
    await db.client.query(`INSERT INTO "${db.schema}".narrow VALUES (7, 'x', '1', '2020-01-01')`);
    const failing = await run(
      ['source', { connectionId: 'PG', tableName: 'orders' }],
      ['transform', { fieldMappings: [{ source: 'email', target: 'email' }] }],
      ['load', { connectionId: 'PG', tableName: 'narrow' }],
      ['reconcile', { mappingSource: 'custom', mappingFile: 'nope.json' }],
    );
    expect(failing.result.status).toBe('failed');
    expect(failing.result.error).toMatch(/screenMapEnabled: the custom mapping file nope.json could not be read/);
    expect(await db.rows(`SELECT id FROM "${db.schema}".narrow`)).toEqual([{ id: 7 }]);
  });

  it('stage replaces the staging table with the rows at that point; db_lookup left-joins selectFields in batches', async () => {
    await seedOrders(4);
    await db.client.query(`CREATE TABLE "${db.schema}".customers (cid integer, name text, tier text, secret text)`);
    await db.client.query(`INSERT INTO "${db.schema}".customers VALUES (1, 'Ada', 'gold', 's'), (3, 'Cy', 'silver', 's')`);
    await db.client.query(`CREATE TABLE "${db.schema}".stg AS SELECT 999 AS id`);
    const { result } = await runEngine(
      {
        source,
        connections: resolver({ PG: db.conn }),
        steps: steps(
          ['source', { connectionId: 'PG', tableName: 'orders' }],
          ['stage', { connectionId: 'PG', tableName: 'stg_orders' }],
          ['db_lookup', { connectionId: 'PG', tableName: 'customers', lookupKey: 'id', joinField: 'cid', selectFields: 'name, tier' }],
          ['load', { connectionId: 'PG', tableName: 'enriched' }],
        ),
      },
      { batchSize: 3 },
    );
    expect(result.error).toBeNull();
    expect(await db.rows(`SELECT count(*)::int AS n FROM "${db.schema}".stg_orders`)).toEqual([{ n: 4 }]);
    expect(await db.rows(`SELECT id, name, tier FROM "${db.schema}".enriched ORDER BY id`)).toEqual([
      { id: 1, name: 'Ada', tier: 'gold' },
      { id: 2, name: null, tier: null },
      { id: 3, name: 'Cy', tier: 'silver' },
      { id: 4, name: null, tier: null },
    ]);
    const all = await run(
      ['source', { connectionId: 'PG', tableName: 'orders' }],
      ['db_lookup', { connectionId: 'PG', tableName: 'customers', lookupKey: 'id', joinField: 'cid' }],
      ['load', { connectionId: 'PG', tableName: 'enriched_all' }],
    );
    expect(all.result.error).toBeNull();
    const cols = await db.rows<{ column_name: string }>(`SELECT column_name FROM information_schema.columns WHERE table_schema = '${db.schema}' AND table_name = 'enriched_all' ORDER BY ordinal_position`);
    expect(cols.map((c) => c.column_name)).toEqual(['id', 'email', 'amount', 'day', 'name', 'tier', 'secret']);
  });

  it('reconcile with mappingSource custom reads mappings/<pipelineId>.json under BI_PIPELINE_FILES_DIR; a missing field fails and rolls back', async () => {
    await seedOrders(2);
    const files = filesFolder({});
    try {
      mkdirSync(join(files.dir, 'mappings'));
      writeFileSync(join(files.dir, 'mappings', 'DP-1.json'), JSON.stringify([{ source: 'email', target: 'email' }, 'id']));
      const list = (extra: Record<string, unknown> = {}) =>
        runEngine({
          source,
          filesDir: files.dir,
          connections: resolver({ PG: db.conn }),
          steps: steps(['source', { connectionId: 'PG', tableName: 'orders' }], ['load', { connectionId: 'PG', tableName: 'mapped' }], ['reconcile', { mappingSource: 'custom', ...extra }]),
        });
      const ok = await list();
      expect(ok.result.status).toBe('succeeded');
      expect(ok.result.steps[2]?.checks?.screenMapEnabled).toEqual({ passed: true, mappingSource: 'custom', fields: ['email', 'id'], missing: [] });
      writeFileSync(join(files.dir, 'mappings', 'other.json'), JSON.stringify({ fieldMappings: [{ source: 'x', target: 'customer_name' }] }));
      await db.client.query(`INSERT INTO "${db.schema}".orders VALUES (3, 'c@x.io', '30', '2026-01-09')`);
      const bad = await list({ mappingFile: 'mappings/other.json' });
      expect(bad.result.status).toBe('failed');
      expect(bad.result.error).toBe(`step reconcile-2 (step-1-2) failed: screenMapEnabled: mapped field(s) customer_name missing in ${db.schema}.mapped`);
      expect(bad.result.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'failed']);
      expect(await db.rows(`SELECT count(*)::int AS n FROM "${db.schema}".mapped`)).toEqual([{ n: 2 }]);
    } finally {
      files.cleanup();
    }
  });

  it('a created table widens a column type and adds a field that appears in a later batch', async () => {
    const files = filesFolder({ 'rows.ndjson': ['{"id":1,"v":1}', '{"id":2,"v":2}', '{"id":3,"v":2.5,"extra":"x"}'].join('\n') });
    try {
      const { result } = await runEngine(
        {
          source: { connectionId: 'PG', type: 'file' },
          filesDir: files.dir,
          connections: resolver({ PG: db.conn }),
          steps: steps(['source', { connectionId: 'PG', path: 'rows.ndjson' }], ['load', { connectionId: 'PG', tableName: 'grown' }]),
        },
        { batchSize: 2 },
      );
      expect(result.error).toBeNull();
      expect(result.steps[1]?.message).toBe(`replace ${db.schema}.grown (created): id integer, v double precision, extra text`);
      expect(await db.rows(`SELECT id, v, extra FROM "${db.schema}".grown ORDER BY id`)).toEqual([
        { id: 1, v: 1, extra: null },
        { id: 2, v: 2, extra: null },
        { id: 3, v: 2.5, extra: 'x' },
      ]);
    } finally {
      files.cleanup();
    }
  });

  it('a first batch rejected entirely does not stop the load: the later rows create the table', async () => {
    await db.client.query(`CREATE TABLE "${db.schema}".late (id integer, email text)`);
    await db.client.query(`INSERT INTO "${db.schema}".late VALUES (1, 'bad'), (2, 'bad'), (3, 'c@x.io'), (4, 'd@x.io')`);
    const { result } = await runEngine(
      {
        source,
        connections: resolver({ PG: db.conn }),
        steps: steps(
          ['source', { connectionId: 'PG', tableName: 'late' }],
          ['validate', { rules: [{ field: 'email', rule: 'email' }] }],
          ['load', { connectionId: 'PG', tableName: 'late_out' }],
        ),
      },
      { batchSize: 2 },
    );
    expect(result.error).toBeNull();
    expect(result.rowsWritten).toBe(2);
    expect(await db.rows(`SELECT id, email FROM "${db.schema}".late_out ORDER BY id`)).toEqual([
      { id: 3, email: 'c@x.io' },
      { id: 4, email: 'd@x.io' },
    ]);
  });

  it('cells no step reads reach the load as their COPY text, with the values parsed cells would have: created and existing tables, rejected rows parsed', async () => {
    await db.client.query(`CREATE TABLE "${db.schema}".cells (id integer, n numeric, d date, t text, big bigint, s smallint)`);
    await db.client.query(
      `INSERT INTO "${db.schema}".cells VALUES
        (1, 12.50, '2026-01-02', E'a\\tb \\\\ c ü', 9007199254740993, 7),
        (2, NULL, NULL, NULL, NULL, NULL),
        (3, 5.00, '0500-03-04', '\\N', -1, -2)`,
    );
    // the existing table's columns take the cells as other types: numeric → numeric (its scale is the parsed value's),
    // date → timestamptz (UTC midnight), text → jsonb (a JSON string), bigint → text, smallint → double precision
    await db.client.query(`CREATE TABLE "${db.schema}".cells_in (id integer, n numeric, d timestamptz, t jsonb, big text, s double precision)`);
    const validate = ['validate', { rules: [{ field: 'id', rule: 'range', params: { max: 2 } }] }] as const;
    const created = await run(['source', { connectionId: 'PG', tableName: 'cells' }], [...validate], ['load', { connectionId: 'PG', tableName: 'cells_out' }]);
    expect(created.result.error).toBeNull();
    expect(created.result.steps[2]?.message).toBe(`replace ${db.schema}.cells_out (created): id integer, n double precision, d date, t text, big bigint, s integer`);
    expect(await db.rows(`SELECT id, n, d::text AS d, t, big::text AS big, s FROM "${db.schema}".cells_out ORDER BY id`)).toEqual([
      { id: 1, n: 12.5, d: '2026-01-02', t: 'a\tb \\ c ü', big: '9007199254740993', s: 7 },
      { id: 2, n: null, d: null, t: null, big: null, s: null },
    ]);
    // the rejected row is recorded as the steps saw it: parsed values, not COPY text
    expect(created.rejects.map((r) => r.row)).toEqual([{ id: 3, n: 5, d: new Date(Date.UTC(500, 2, 4)), t: '\\N', big: -1, s: -2 }]);
    const existing = await run(['source', { connectionId: 'PG', tableName: 'cells' }], [...validate], ['load', { connectionId: 'PG', tableName: 'cells_in', mode: 'append' }]);
    expect(existing.result.error).toBeNull();
    expect(await db.rows(`SELECT id, n::text AS n, extract(epoch FROM d)::int AS d, t #>> '{}' AS t, big, s FROM "${db.schema}".cells_in ORDER BY id`)).toEqual([
      { id: 1, n: '12.5', d: Date.UTC(2026, 0, 2) / 1000, t: 'a\tb \\ c ü', big: '9007199254740993', s: 7 },
      { id: 2, n: null, d: null, t: null, big: null, s: null },
    ]);
  });

  it('round-trips awkward values from a PostgreSQL source into a created table', async () => {
    await db.client.query(`CREATE TABLE "${db.schema}".odd (id integer, t text, big bigint, num numeric, ts timestamp, tz timestamptz, ok boolean, doc jsonb, f double precision)`);
    await db.client.query(
      `INSERT INTO "${db.schema}".odd VALUES
        (1, E'tab\\there\\nline \\\\ back ünï', 9007199254740993, 12.50, '2026-05-06 07:08:09.123456', '2026-05-06 07:08:09+02', true, '{"a":[1,"x"]}', 0.1),
        (2, NULL, NULL, 1234.5, NULL, NULL, false, NULL, -1e300),
        (3, '\\N', -5, -0.001, '2026-05-06 00:00:00', NULL, NULL, '[true]', NULL)`,
    );
    const { result } = await run(['source', { connectionId: 'PG', tableName: 'odd' }], ['load', { connectionId: 'PG', tableName: 'odd_out' }]);
    expect(result.error).toBeNull();
    // Documented limits: timestamps carry milliseconds (JavaScript dates), numeric becomes a double.
    const q = (t: string) =>
      `SELECT id, t, big::text, num::float8 AS num, date_trunc('milliseconds', ts::timestamp)::text AS ts, tz::text, ok, doc::jsonb::text AS doc, f FROM "${db.schema}".${t} ORDER BY id`;
    expect(await db.rows(q('odd_out'))).toEqual(await db.rows(q('odd')));
  });

  it('an empty source: replace empties an existing table, a missing one is not created, reconcile counts 0', async () => {
    await db.client.query(`CREATE TABLE "${db.schema}".empty_src (id integer)`);
    await db.client.query(`CREATE TABLE "${db.schema}".full_dst (id integer)`);
    await db.client.query(`INSERT INTO "${db.schema}".full_dst VALUES (1), (2)`);
    const emptied = await run(['source', { connectionId: 'PG', tableName: 'empty_src' }], ['load', { connectionId: 'PG', tableName: 'full_dst' }], ['reconcile', {}]);
    expect(emptied.result).toMatchObject({ status: 'succeeded', rowsRead: 0, rowsWritten: 0 });
    expect(await db.rows(`SELECT count(*)::int AS n FROM "${db.schema}".full_dst`)).toEqual([{ n: 0 }]);
    const none = await run(['source', { connectionId: 'PG', tableName: 'empty_src' }], ['load', { connectionId: 'PG', tableName: 'never' }], ['reconcile', {}]);
    expect(none.result.status).toBe('succeeded');
    expect(none.result.steps[2]?.checks?.compareRowCounts).toMatchObject({ passed: true, expected: 0, actual: 0 });
    expect(await db.rows(`SELECT to_regclass('"${db.schema}".never')::text AS t`)).toEqual([{ t: null }]);
  });
});
