import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Batch, EgressPolicy, ResolvedConnection, Row } from '../../types.ts';
import { connectPostgres, qualified, textParser } from '../connections.ts';

export interface TableSource {
  schema: string | undefined;
  table: string;
  batchSize: number;
  purpose: string;
}

const NEWLINE = 0x0a;
const ESCAPE = /\\(.)/g;
const UNESCAPE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };

/** A COPY text field without its backslash escapes (octal/hex forms are not produced by COPY TO). */
const unescape = (s: string): string => (s.includes('\\') ? s.replace(ESCAPE, (_, c: string) => UNESCAPE[c] ?? c) : s);

/**
 * The rows of a PostgreSQL table, streamed with `COPY (SELECT * FROM table) TO STDOUT` (text
 * format: one statement, one snapshot, backpressure through the socket) and parsed per column with
 * the type's text parser, `batchSize` rows at a time. Several times faster than a cursor.
 */
export async function* postgresTableRows(conn: ResolvedConnection, egress: EgressPolicy, src: TableSource): AsyncIterable<Batch> {
  const client = await connectPostgres(conn, egress, src.purpose);
  try {
    const table = qualified(src.schema, src.table);
    const shape = await client.query({ text: `SELECT * FROM ${table} LIMIT 0` }).catch((err: Error) => {
      throw new Error(`cannot read ${src.schema ? `${src.schema}.` : ''}${src.table}: ${err.message}`);
    });
    const names = shape.fields.map((f) => f.name);
    const parsers = shape.fields.map((f) => textParser(f.dataTypeID));
    const width = names.length;
    // A few MB of buffer: PostgreSQL keeps sending while the steps work on earlier batches.
    const copy = client.query(copyTo(`COPY (SELECT * FROM ${table}) TO STDOUT`, { highWaterMark: 4 * 1024 * 1024 }));
    let rest: Buffer | undefined;
    let batch: Batch = [];
    for await (const chunk of copy as AsyncIterable<Buffer>) {
      const data = rest ? Buffer.concat([rest, chunk]) : chunk;
      const end = data.lastIndexOf(NEWLINE);
      if (end === -1) {
        rest = data;
        continue;
      }
      // One decode per chunk; lines and cells are slices of it.
      const text = data.toString('utf8', 0, end + 1);
      rest = end + 1 < data.length ? data.subarray(end + 1) : undefined;
      let start = 0;
      while (start < text.length) {
        const nl = text.indexOf('\n', start);
        const row: Row = {};
        let from = start;
        for (let i = 0; i < width; i++) {
          const tab = i === width - 1 ? nl : text.indexOf('\t', from);
          const cell = text.slice(from, tab);
          row[names[i] as string] = cell === '\\N' ? null : (parsers[i] as (v: string) => unknown)(unescape(cell));
          from = tab + 1;
        }
        batch.push(row);
        start = nl + 1;
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
