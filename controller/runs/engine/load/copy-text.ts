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

/** `toISOString().slice(0, 10)` without the rest of the ISO string (years 1000–9999; others the long way). */
export function isoDay(d: Date): string {
  const y = d.getUTCFullYear();
  if (!(y >= 1000 && y <= 9999)) return d.toISOString().slice(0, 10);
  const m = d.getUTCMonth() + 1;
  const day = d.getUTCDate();
  return `${y}${m < 10 ? '-0' : '-'}${m}${day < 10 ? '-0' : '-'}${day}`;
}

/** The encoder for a column of that SQL data type. */
export function encoderFor(dataType: string): Encoder {
  if (dataType === 'json' || dataType === 'jsonb') return (v) => escapeText(JSON.stringify(typeof v === 'bigint' ? v.toString() : v));
  if (dataType === 'date') return (v) => (v instanceof Date ? isoDay(v) : escapeText(asText(v)));
  if (dataType === 'boolean') return (v) => (v === true ? 't' : v === false ? 'f' : escapeText(asText(v)));
  return (v) => (typeof v === 'number' ? String(v) : escapeText(asText(v)));
}

/** `buf` with room for `n` more bytes after `pos` (doubled when it has not). */
function grow(buf: Buffer, pos: number, n: number): Buffer {
  const bigger = Buffer.allocUnsafe(Math.max(buf.length * 2, pos + n));
  buf.copy(bigger, 0, 0, pos);
  return bigger;
}

/** The digits of a non-negative integer below 2^31 at `pos`; answers the position after them. */
function putDigits(buf: Buffer, pos: number, n: number): number {
  let digits = 1;
  for (let x = n; x >= 10; x = (x / 10) | 0) digits++;
  for (let i = pos + digits - 1; i >= pos; i--) {
    buf[i] = 0x30 + (n % 10);
    n = (n / 10) | 0;
  }
  return pos + digits;
}

/** Bytes putNumber may write. */
const NUMBER_BYTES = 15;

/**
 * A number exactly as String(v) writes it, at `pos` (NUMBER_BYTES of room): integers below 2^31
 * and amounts of at most two decimals below 10^9 (the double nearest to r/100: its shortest form
 * has those digits) digit by digit; answers the position after it, or -1 for any other number
 * (the caller writes String(v)).
 */
function putNumber(buf: Buffer, pos: number, v: number): number {
  let units: number;
  let cents = -1;
  if (Number.isInteger(v) && v >= -2147483647 && v <= 2147483647) units = v;
  else {
    const r = Math.round(v * 100);
    if (!(r / 100 === v && r >= -1e11 && r <= 1e11)) return -1;
    units = r < 0 ? -Math.floor(-r / 100) : Math.floor(r / 100);
    cents = Math.abs(r) % 100;
  }
  if (v < 0) buf[pos++] = 0x2d;
  pos = putDigits(buf, pos, Math.abs(units));
  if (cents > 0) {
    buf[pos++] = 0x2e;
    buf[pos++] = 0x30 + ((cents / 10) | 0);
    if (cents % 10 !== 0) buf[pos++] = 0x30 + (cents % 10);
  }
  return pos;
}

/**
 * Characters from which a string that needs no escapes goes through one Buffer.write call: a call
 * costs about what the character loop costs for 20–25 characters (more for a slice of a larger
 * string, as the source's raw cells are).
 */
const NATIVE_WRITE_FROM = 24;

/**
 * The generated statements writing the string `s` and one separator byte at `pos` into `buf`
 * (room made first), with COPY's escapes (backslash, tab, newline, CR) when `escape` (text values;
 * the Encoders' output and raw cells are escaped already). ASCII is copied a character at a time
 * (no intermediate string, no UTF-8 pass); from the first other character on, the rest goes
 * through Buffer.write — as does the whole of a long string that needs no escapes.
 */
function writeStringCode(escape: boolean, separator: number): string {
  // escaped ASCII takes 2 bytes a character, anything else at most 3 bytes a UTF-16 unit
  return `n = s.length;
        if (pos + n * 3 + 1 > buf.length) buf = grow(buf, pos, n * 3 + 1);
        ${escape ? '' : `if (n > ${NATIVE_WRITE_FROM}) { pos += buf.write(s, pos); i = n; } else`}
        for (i = 0; i < n; i++) {
          c = s.charCodeAt(i);
          if (c >= 0x80) break;
          ${escape ? 'if (c === 0x5c || c === 0x09 || c === 0x0a || c === 0x0d) { buf[pos++] = 0x5c; buf[pos++] = c === 0x5c ? 0x5c : c === 0x09 ? 0x74 : c === 0x0a ? 0x6e : 0x72; continue; }' : ''}
          buf[pos++] = c;
        }
        if (i < n) pos += buf.write(${escape ? 'escapeText(i === 0 ? s : s.slice(i))' : '(i === 0 ? s : s.slice(i))'}, pos, 'utf8');
        buf[pos++] = ${separator};`;
}

/**
 * How a field of raw cells (COPY text of a PostgreSQL source, runs/engine/raw-cells.ts) is written:
 * `pass` copies the text as it is (its escapes are COPY's), a function parses it into the value
 * the column's encoder then writes.
 */
export type RawColumn = 'pass' | ((text: string) => unknown);

/** Rows as COPY text bytes, counting the non-null cells of each column into `nonNull`. */
export type BatchEncoder = (rows: Row[], nonNull: Float64Array) => Buffer;

const NUMERIC_TYPES = new Set(['integer', 'bigint', 'smallint', 'double precision', 'real', 'numeric']);

/**
 * The batch encoder of one column list, compiled once (and again when a created table's columns
 * change): each field is read with a constant key (a monomorphic property access instead of a
 * keyed lookup per cell), numbers and text are written straight into one Buffer per batch (no
 * string per cell, line or batch; sized from the batch before) by statements generated per column
 * — the buffer and the position stay in local variables, no call per cell — other types through
 * their Encoder. Field names enter the generated code only as JSON string literals.
 */
export function compileBatchEncoder(columns: string[], dataTypes: string[], raw: readonly (RawColumn | undefined)[] = []): BatchEncoder {
  const encoders = dataTypes.map(encoderFor);
  const cells = columns.map((name, c) => {
    const separator = c === columns.length - 1 ? 0x0a : 0x09;
    const type = dataTypes[c] as string;
    const mode = raw[c];
    // a raw cell (a source's COPY text, runs/engine/raw-cells.ts) is copied as it is, or parsed and then encoded as any value
    const parse = typeof mode === 'function' ? `if (typeof v === 'string') v = pre[${c}](v);` : '';
    const encoded = `s = enc[${c}](v); ${writeStringCode(false, separator)}`;
    const write =
      mode === 'pass'
        ? `s = typeof v === 'string' ? v : enc[${c}](v); ${writeStringCode(false, separator)}`
        : NUMERIC_TYPES.has(type)
          ? `if (typeof v === 'number') {
          if (pos + ${NUMBER_BYTES + 1} > buf.length) buf = grow(buf, pos, ${NUMBER_BYTES + 1});
          n = putNumber(buf, pos, v);
          if (n >= 0) { pos = n; buf[pos++] = ${separator}; }
          else { s = \`\${v}\`; ${writeStringCode(false, separator)} }
        } else { ${encoded} }`
          : type === 'text' || type.startsWith('character')
            ? `if (typeof v === 'string') { s = v; ${writeStringCode(true, separator)} } else { ${encoded} }`
            : encoded;
    return `v = row[${JSON.stringify(name)}];
      if (v === null || v === undefined) {
        if (pos + 3 > buf.length) buf = grow(buf, pos, 3);
        buf[pos++] = 0x5c; buf[pos++] = 0x4e; buf[pos++] = ${separator};
      } else {
        nonNull[${c}]++;
        ${parse}
        ${write}
      }`;
  });
  const body = `let size = 1 << 16;
  return function encode(rows, nonNull) {
    let buf = Buffer.allocUnsafe(size), pos = 0;
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      let v, s, n, i, c;
      ${cells.join('\n      ')}
    }
    size = Math.max(1 << 16, Math.ceil(pos * 1.1));
    return buf.subarray(0, pos);
  };`;
  const pre = raw.map((m) => (typeof m === 'function' ? m : undefined));
  return new Function('enc', 'pre', 'grow', 'putNumber', 'escapeText', 'Buffer', body)(encoders, pre, grow, putNumber, escapeText, Buffer) as BatchEncoder;
}
