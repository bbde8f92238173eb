import type { Row } from '../types.ts';
import { textForm, textParser } from './connections.ts';
import { ANY_VALUE, type ColumnKind, type Family, type Settled, fits, kindOf } from './load/columns.ts';
import { unescapeCopyText } from './sources/copy-rows.ts';

const INT2 = 21;
const INT4 = 23;
const INT8 = 20;
const NUMERIC = 1700;
const DATE = 1082;
const INTEGER_OIDS: ReadonlySet<number> = new Set([INT2, INT4, INT8]);
const NUMBER_TYPES: ReadonlySet<string> = new Set(['smallint', 'integer', 'bigint', 'numeric', 'real', 'double precision']);
const TEXT_TYPES = (t: string): boolean => t === 'text' || t.startsWith('character');

/** Digits before the decimal point of a plain decimal (`-12.50` → 2); Infinity when it is not one. */
function integerDigits(text: string): number {
  const start = text.charCodeAt(0) === 45 ? 1 : 0;
  let i = start;
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) break;
    if (c < 48 || c > 57) return Infinity;
  }
  return i === start ? Infinity : i - start;
}

// COPY writes dates as YYYY-MM-DD (ISO DateStyle): each one a date at UTC midnight
const isoDay = (text: string): boolean => text.length === 10 && text.charCodeAt(4) === 45 && text.charCodeAt(7) === 45;
// a numeric of at most 9 integer digits (PostgreSQL writes no exponent) is a double precision value
const shortNumeric = (text: string): boolean => text.length <= 15 && integerDigits(text) <= 9;
const isText: Settled = (v) => typeof v === 'string';
const isIsoDay: Settled = (v) => typeof v === 'string' && isoDay(v);
const isShortNumeric: Settled = (v) => typeof v === 'string' && shortNumeric(v);
const noValue: Settled = () => false;

/**
 * Cells no step reads, passed from a PostgreSQL source to the COPY of a load as the COPY text
 * they arrived in (escapes kept): no parse into a JavaScript value and no encoding back. Only
 * for a run whose steps name every field they read or write (transform and validate rules,
 * field mappings) — `enable` is given those names — and only where writing the source's text
 * stores the same value the parsed value would have stored (`passes`): integers into number or
 * text columns, numeric into floating-point ones, a date into a date column, text into anything
 * but JSON. Elsewhere a load parses the cell first. A rejected row is recorded with its cells
 * parsed (`materialize`), so nothing outside the source and the load sees a raw cell.
 */
export class RawCells {
  #touched: ReadonlySet<string> | undefined;
  /** Raw columns of the source: name → PostgreSQL type OID. */
  readonly columns = new Map<string, number>();

  /** Turns pass-through on for a run whose steps read and write only `touched` fields. */
  enable(touched: Iterable<string>): void {
    this.#touched = new Set(touched);
  }

  get enabled(): boolean {
    return this.#touched !== undefined;
  }

  /** Whether the source keeps this column's cells as text (and records it). */
  claim(name: string, oid: number): boolean {
    if (!this.#touched || this.#touched.has(name) || name === '__proto__') return false;
    if (!(INTEGER_OIDS.has(oid) || oid === NUMERIC || oid === DATE || textForm(oid) === 'text')) return false;
    this.columns.set(name, oid);
    return true;
  }

  /** The value the source would have decoded from this cell's COPY text. */
  static parse(oid: number, text: string): unknown {
    return textParser(oid)(text.includes('\\') ? unescapeCopyText(text) : text);
  }

  /** Whether the COPY text of a cell of type `oid` goes into a column of `dataType` as it is. */
  static passes(oid: number, dataType: string): boolean {
    if (INTEGER_OIDS.has(oid)) return NUMBER_TYPES.has(dataType) || TEXT_TYPES(dataType);
    if (oid === NUMERIC) return dataType === 'double precision' || dataType === 'real';
    if (oid === DATE) return dataType === 'date';
    return textForm(oid) === 'text' && dataType !== 'json' && dataType !== 'jsonb';
  }

  /**
   * The column kind of the value of a raw cell (a created table's type inference), or — given the
   * column's `current` kind — a kind that widens it exactly as the value's own kind would: a
   * numeric of at most 9 integer digits (PostgreSQL writes no exponent) keeps a double precision
   * column as it is without being parsed.
   */
  static kindOf(oid: number, text: string, current?: ColumnKind): ColumnKind {
    if (oid === INT2 || oid === INT4) return 'integer';
    if (oid === DATE && isoDay(text)) return 'date';
    if (oid === NUMERIC && current === 'double precision' && shortNumeric(text)) return current;
    if (textForm(oid) === 'text') return 'text';
    return kindOf(RawCells.parse(oid, text));
  }

  /** Whether the value of a raw cell fits an existing column of that family (the load's schema check). */
  static fits(oid: number, text: string, family: Family): boolean {
    if ((oid === INT2 || oid === INT4) && (family === 'integer' || family === 'number')) return true;
    return fits(RawCells.parse(oid, text), family);
  }

  /**
   * The quick test of the load's schema check (load/columns.ts) for a field of raw cells of type
   * `oid` in a created column of kind `kind`: the cells `kindOf` answers `kind` for without a parse.
   */
  static settledKind(oid: number, kind: ColumnKind): Settled {
    if (kind === 'text') return ANY_VALUE;
    if ((oid === INT2 || oid === INT4) && kind === 'integer') return isText;
    if (oid === DATE && kind === 'date') return isIsoDay;
    if (oid === NUMERIC && kind === 'double precision') return isShortNumeric;
    return noValue;
  }

  /** The same for an existing column of that family: the cells `fits` accepts without a parse. */
  static settledFamily(oid: number, family: Family): Settled {
    if (family === 'text' || family === 'json' || family === 'other') return ANY_VALUE;
    if ((oid === INT2 || oid === INT4) && (family === 'integer' || family === 'number')) return isText;
    return noValue;
  }

  /** A copy of `row` with its raw cells parsed (a rejected row as the steps would have seen it). */
  materialize(row: Row): Row {
    if (this.columns.size === 0) return row;
    const out: Row = { ...row };
    for (const [name, oid] of this.columns) {
      const v = out[name];
      if (typeof v === 'string') out[name] = RawCells.parse(oid, v);
    }
    return out;
  }
}
