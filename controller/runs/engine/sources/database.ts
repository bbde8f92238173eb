import Cursor from 'pg-cursor';
import type { Batch, EgressPolicy, ResolvedConnection, Row } from '../../types.ts';
import { connectPostgres, qualified } from '../connections.ts';

export interface TableSource {
  schema: string | undefined;
  table: string;
  batchSize: number;
  purpose: string;
}

/**
 * The rows of a PostgreSQL table through a server-side cursor (`batchSize` rows per fetch, in a
 * read-only REPEATABLE READ transaction: one consistent snapshot, never the whole table in memory).
 */
export async function* postgresTableRows(conn: ResolvedConnection, egress: EgressPolicy, src: TableSource): AsyncIterable<Batch> {
  const client = await connectPostgres(conn, egress, src.purpose);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const cursor = client.query(new Cursor<Row>(`SELECT * FROM ${qualified(src.schema, src.table)}`));
    try {
      for (;;) {
        const rows = await cursor.read(src.batchSize);
        if (rows.length === 0) break;
        yield rows;
      }
    } finally {
      await cursor.close().catch(() => {});
    }
    await client.query('COMMIT');
  } finally {
    await client.end().catch(() => {});
  }
}
