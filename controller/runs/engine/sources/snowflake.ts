import type { Batch, ResolvedConnection, Row } from '../../types.ts';
import { snowflakeAccessUrl } from '../../../lib/endpoints.ts';

interface SnowflakeStatement {
  streamRows(): NodeJS.ReadableStream;
}
interface SnowflakeConnection {
  connect(callback: (err: unknown) => void): unknown;
  execute(opts: { sqlText: string; streamResult: boolean; complete: (err: unknown, stmt: SnowflakeStatement) => void }): SnowflakeStatement;
  destroy(fn: (err: unknown) => void): void;
}

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The rows of a Snowflake table, streamed by `snowflake-sdk` (`streamResult`), in batches.
 * Not exercised by the tests of this repository (no Snowflake account here): same interface as
 * the PostgreSQL source.
 */
export async function* snowflakeTableRows(
  conn: ResolvedConnection,
  src: { schema: string | undefined; table: string; batchSize: number },
  check: (host: string, port: number) => Promise<void>,
): AsyncIterable<Batch> {
  const accessUrl = conn.accountUrl ? snowflakeAccessUrl(conn.accountUrl) : undefined;
  if (!accessUrl) throw new Error(`connection ${conn.connectionId} has no Snowflake account URL`);
  await check(new URL(accessUrl).hostname, 443);
  const { default: snowflake } = await import('snowflake-sdk');
  snowflake.configure({ logLevel: 'OFF' });
  const connection = snowflake.createConnection({
    accessUrl,
    username: conn.username ?? '',
    password: conn.password ?? '',
    warehouse: conn.warehouse,
    database: conn.database,
    schema: src.schema ?? conn.schema,
    application: 'bi-controller',
  }) as unknown as SnowflakeConnection;
  await new Promise<void>((resolve, reject) => connection.connect((err) => (err ? reject(err) : resolve())));
  try {
    const table = src.schema ? `${quote(src.schema)}.${quote(src.table)}` : quote(src.table);
    const statement = connection.execute({ sqlText: `SELECT * FROM ${table}`, streamResult: true, complete: () => {} });
    let batch: Batch = [];
    for await (const row of statement.streamRows() as AsyncIterable<Row>) {
      batch.push(row);
      if (batch.length >= src.batchSize) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    connection.destroy(() => {});
  }
}
