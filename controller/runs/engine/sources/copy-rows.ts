import type { Row } from '../../types.ts';
import { simpleDateMs, textForm, textParser } from '../connections.ts';

/** A text-format value parser of one column (PostgreSQL's `typinput` text, escapes already removed). */
export type CellParser = (v: string) => unknown;

/**
 * Decodes whole lines of `COPY … TO STDOUT` text from `pos` into rows appended to `out`, until the
 * text ends or `out` holds `max` rows; answers where it stopped (the start of the next line).
 * `text` ends with a newline.
 */
export type RowDecoder = (text: string, pos: number, out: Row[], max: number) => number;

const ESCAPE = /\\(.)/g;
const UNESCAPE: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\' };

/** A COPY text field without its backslash escapes (octal/hex forms are not produced by COPY TO). */
export const unescapeCopyText = (s: string): string => s.replace(ESCAPE, (_, c: string) => UNESCAPE[c] ?? c);

/**
 * The decoder of one column list (PostgreSQL type OIDs), compiled once per source: each row is one
 * object literal with the column names as constant keys (every row gets the same hidden class, so
 * the steps' reads of a field stay monomorphic), cells are slices of the chunk's text, `\N` is null;
 * text columns are their text (no parser call), 16/32-bit integers and dates are read from the
 * characters in place (no slice; anything unexpected falls back to the parser), the rest go through
 * their type's text parser. Column names enter the generated code only as JSON string literals; a
 * `__proto__` column (an object literal would set the prototype) is decoded by the generic loop.
 */
export function compileRowDecoder(names: string[], oids: number[], raw: readonly boolean[] = []): RowDecoder {
  const parsers = oids.map(textParser);
  if (names.length === 0 || names.includes('__proto__')) return genericDecoder(names, parsers, raw);
  // \N and escapes both start with a backslash: a cell before the next backslash of the text is its own value.
  const seekBackslash = `if (bs < from) { bs = text.indexOf('\\\\', from); if (bs === -1) bs = length; }`;
  const cells = names.map((_, i) => {
    const end = i === names.length - 1 ? `text.indexOf('\\n', from)` : `text.indexOf('\\t', from)`;
    // A cell no step reads (runs/engine/raw-cells.ts): its COPY text as it is, escapes kept; `\N` is null.
    if (raw[i]) return `end = ${end}; cell = text.slice(from, end); ${seekBackslash} c${i} = bs < end && cell === '\\\\N' ? null : cell; from = end + 1;`;
    const form = textForm(oids[i] as number);
    const value = form === 'text' ? 'cell' : `p${i}(cell)`;
    const generic = `cell = text.slice(from, end);
      ${seekBackslash}
      if (bs >= end) c${i} = ${value};
      else if (cell === '\\\\N') c${i} = null;
      else { if (cell.indexOf('\\\\') !== -1) cell = unescape(cell); c${i} = ${value}; }`;
    if (form === 'int') {
      return `end = ${end};
      c${i} = intAt(text, from, end);
      if (c${i} === undefined) { ${generic} }
      from = end + 1;`;
    }
    if (form === 'date') {
      return `end = ${end};
      ms = end - from === 10 ? simpleDateMs(text, from) : NaN;
      if (ms === ms) c${i} = new Date(ms);
      else { ${generic} }
      from = end + 1;`;
    }
    return `end = ${end}; ${generic} from = end + 1;`;
  });
  const body = `${parsers.map((_, i) => `const p${i} = parsers[${i}];`).join('\n')}
  return function decode(text, pos, out, max) {
    const length = text.length;
    let bs = -1;
    while (pos < length && out.length < max) {
      let from = pos, end, cell, ms, ${names.map((_, i) => `c${i}`).join(', ')};
      ${cells.join('\n      ')}
      out.push({ ${names.map((n, i) => `${JSON.stringify(n)}: c${i}`).join(', ')} });
      pos = from;
    }
    return pos;
  };`;
  return new Function('parsers', 'unescape', 'intAt', 'simpleDateMs', body)(parsers, unescapeCopyText, intAt, simpleDateMs) as RowDecoder;
}

/** The integer written `-?[0-9]{1,10}` in text[from, end) (as parseInt reads it), or undefined. */
function intAt(text: string, from: number, end: number): number | undefined {
  let i = from;
  const negative = text.charCodeAt(i) === 45;
  if (negative) i++;
  if (i === end || end - i > 10) return undefined;
  let n = 0;
  for (; i < end; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return undefined;
    n = n * 10 + d;
  }
  return negative ? -n : n;
}

function genericDecoder(names: string[], parsers: CellParser[], raw: readonly boolean[]): RowDecoder {
  const width = names.length;
  return (text, pos, out, max) => {
    while (pos < text.length && out.length < max) {
      const nl = text.indexOf('\n', pos);
      const row: Row = {};
      let from = pos;
      for (let i = 0; i < width; i++) {
        const end = i === width - 1 ? nl : text.indexOf('\t', from);
        const cell = text.slice(from, end);
        Object.defineProperty(row, names[i] as string, {
          value: cell === '\\N' ? null : raw[i] ? cell : (parsers[i] as CellParser)(cell.includes('\\') ? unescapeCopyText(cell) : cell),
          enumerable: true,
          writable: true,
          configurable: true,
        });
        from = end + 1;
      }
      out.push(row);
      pos = nl + 1;
    }
    return pos;
  };
}

const NEWLINE = 0x0a;

/**
 * COPY text chunks (cut anywhere, also inside a UTF-8 character) as texts of whole lines. Lines
 * are decoded where they lie in their chunk; only a line cut by a chunk boundary is copied (joined
 * to its start from the chunk before) — never a whole chunk. A last line without a newline is dropped
 * (COPY ends every row with one).
 */
export async function* wholeLines(chunks: AsyncIterable<Buffer>): AsyncIterable<string> {
  let rest: Buffer | undefined;
  for await (const chunk of chunks) {
    let from = 0;
    if (rest) {
      const nl = chunk.indexOf(NEWLINE);
      if (nl === -1) {
        rest = Buffer.concat([rest, chunk]);
        continue;
      }
      yield Buffer.concat([rest, chunk.subarray(0, nl + 1)]).toString('utf8');
      rest = undefined;
      from = nl + 1;
    }
    const end = chunk.lastIndexOf(NEWLINE);
    if (end >= from) yield chunk.toString('utf8', from, end + 1);
    const tail = Math.max(end + 1, from);
    if (tail < chunk.length) rest = chunk.subarray(tail);
  }
}
