import pg from 'pg';
import { findPostgresUser, PG } from '../harness.ts';
import type { ResolvedConnection } from '../../../controller/runs/types.ts';

/** A unique schema per test in the local PostgreSQL, with a client and a resolved connection to it. */
export interface PgSchema {
  schema: string;
  client: pg.Client;
  conn: ResolvedConnection;
  rows<T = Record<string, unknown>>(sql: string): Promise<T[]>;
  drop(): Promise<void>;
}

let n = 0;

export async function pgSchema(): Promise<PgSchema> {
  const user = await findPostgresUser();
  const schema = `bi_e2e_${process.pid}_${Date.now()}_${++n}`;
  const client = new pg.Client({ host: PG.host, port: PG.port, database: PG.database, user });
  await client.connect();
  await client.query(`CREATE SCHEMA "${schema}"`);
  const conn: ResolvedConnection = { connectionId: 'PG', vendor: 'POSTGRESQL', host: PG.host, port: PG.port, database: PG.database, schema, username: user };
  return {
    schema,
    client,
    conn,
    rows: async <T>(sql: string) => (await client.query(sql)).rows as T[],
    drop: async () => {
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}
