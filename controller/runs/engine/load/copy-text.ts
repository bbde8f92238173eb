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

/**
 * Rows as COPY text, one string for the whole batch (cells and separators joined once: no
 * per-line strings), counting the non-null cells of each column into `nonNull`.
 */
export function encodeBatch(rows: Row[], columns: string[], encoders: Encoder[], nonNull?: Float64Array): string {
  const n = columns.length;
  const parts = new Array<string>(rows.length * n * 2);
  let p = 0;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Row;
    for (let c = 0; c < n; c++) {
      const v = row[columns[c] as string];
      if (v === null || v === undefined) parts[p++] = '\\N';
      else {
        parts[p++] = (encoders[c] as Encoder)(v);
        if (nonNull) nonNull[c] = (nonNull[c] as number) + 1;
      }
      parts[p++] = c === n - 1 ? '\n' : '\t';
    }
  }
  return parts.join('');
}

export type BatchEncoder = (rows: Row[], nonNull: Float64Array) => string;

const NUMERIC_TYPES = new Set(['integer', 'bigint', 'smallint', 'double precision', 'real', 'numeric']);

/**
 * `encodeBatch` compiled for one column list: each field is read with a constant key (a
 * monomorphic property access instead of a keyed lookup per cell) and the common value types are
 * written inline. Field names enter the generated code only as JSON string literals.
 */
export function compileBatchEncoder(columns: string[], dataTypes: string[]): BatchEncoder {
  const encoders = dataTypes.map(encoderFor);
  const cells = columns.map((name, c) => {
    const fast = NUMERIC_TYPES.has(dataTypes[c] as string)
      ? `typeof v === 'number' ? '' + v : enc[${c}](v)`
      : dataTypes[c] === 'text' || (dataTypes[c] as string).startsWith('character')
        ? `typeof v === 'string' ? (special.test(v) ? escape(v) : v) : enc[${c}](v)`
        : `enc[${c}](v)`;
    return `v = row[${JSON.stringify(name)}];
      const c${c} = v === null || v === undefined ? '\\\\N' : (nonNull[${c}]++, ${fast});`;
  });
  const line = columns.map((_, c) => `c${c}`).join(" + '\\t' + ");
  const body = `return function encode(rows, nonNull) {
    const lines = new Array(rows.length);
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      let v;
      ${cells.join('\n      ')}
      lines[r] = ${line || "''"};
    }
    return lines.length > 0 ? lines.join('\\n') + '\\n' : '';
  };`;
  return new Function('enc', 'special', 'escape', body)(encoders, SPECIAL, escapeText) as BatchEncoder;
}
