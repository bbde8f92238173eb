import pg from 'pg';
import type { Batch, EgressPolicy, ResolvedConnection } from '../../types.ts';
import { connectPostgres, qualified } from '../connections.ts';
import { copyOutStream } from './copy-out.ts';
import { compileRowDecoder, wholeLines } from './copy-rows.ts';
import type { RawCells } from '../raw-cells.ts';

export interface TableSource {
  schema: string | undefined;
  table: string;
  batchSize: number;
  purpose: string;
  /** The session's search_path: the tenant's pinned schema on a shared connection. */
  searchPath?: string;
  /** Columns no step reads, kept as their COPY text (runs/engine/raw-cells.ts). */
  raw?: RawCells;
}

/**
 * The rows of a PostgreSQL table, streamed with `COPY (SELECT * FROM table) TO STDOUT` (text
 * format: one statement, one snapshot, backpressure through the socket) and parsed per column with
 * the type's text parser, `batchSize` rows at a time. Several times faster than a cursor.
 */
export async function* postgresTableRows(conn: ResolvedConnection, egress: EgressPolicy, src: TableSource): AsyncIterable<Batch> {
  const client = await connectPostgres(conn, egress, src.purpose, src.searchPath);
  try {
    const table = qualified(src.schema, src.table);
    const shape = await client.query({ text: `SELECT * FROM ${table} LIMIT 0` }).catch((err: Error) => {
      throw new Error(`cannot read ${src.schema ? `${src.schema}.` : ''}${src.table}: ${err.message}`);
    });
    const names = shape.fields.map((f) => f.name);
    const oids = shape.fields.map((f) => f.dataTypeID);
    const decode = compileRowDecoder(names, oids, src.raw ? names.map((name, i) => (src.raw as RawCells).claim(name, oids[i] as number)) : []);
    // 64 chunks (a few MB) of buffer: PostgreSQL keeps sending while the steps work on earlier batches.
    const copy = client.query(copyOutStream(`COPY (SELECT * FROM ${table}) TO STDOUT`, { highWaterMark: 64 }));
    let batch: Batch = [];
    for await (const text of wholeLines(copy as AsyncIterable<Buffer>)) {
      let pos = 0;
      while (pos < text.length) {
        pos = decode(text, pos, batch, src.batchSize);
        if (batch.length >= src.batchSize) {
          yield batch;
          batch = [];
        }
      }
    }
    if (batch.length > 0) yield batch;
  } finally {
    await client.end().catch(() => {});
  }
}

export type { pg };
