import type { Row } from '../../types.ts';

/** Encodes one value for a column in COPY text format (null is written by the caller). */
export type Encoder = (v: unknown) => string;

const SPECIAL = /[\\\t\n\r]/;
const SPECIAL_ALL = /[\\\t\n\r]/g;
const ESCAPES: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

export const escapeText = (s: string): string => (SPECIAL.test(s) ? s.replace(SPECIAL_ALL, (c) => ESCAPES[c] as string) : s);

const asText = (v: unknown): string => {
  if (typeof v === 'string') return v;
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
};

/** The encoder for a column of that SQL data type. */
export function encoderFor(dataType: string): Encoder {
  if (dataType === 'json' || dataType === 'jsonb') return (v) => escapeText(JSON.stringify(typeof v === 'bigint' ? v.toString() : v));
  if (dataType === 'date') return (v) => (v instanceof Date ? v.toISOString().slice(0, 10) : escapeText(asText(v)));
  if (dataType === 'boolean') return (v) => (v === true ? 't' : v === false ? 'f' : escapeText(asText(v)));
  return (v) => (typeof v === 'number' ? String(v) : escapeText(asText(v)));
}

/** Rows as COPY text lines, one string for the whole batch. */
export function encodeBatch(rows: Row[], columns: string[], encoders: Encoder[]): string {
  const lines = new Array<string>(rows.length);
  const n = columns.length;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Row;
    let line = '';
    for (let c = 0; c < n; c++) {
      const v = row[columns[c] as string];
      const cell = v === null || v === undefined ? '\\N' : (encoders[c] as Encoder)(v);
      line = c === 0 ? cell : `${line}\t${cell}`;
    }
    lines[r] = line;
  }
  return lines.length > 0 ? `${lines.join('\n')}\n` : '';
}
