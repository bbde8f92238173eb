import type { Row } from '../../types.ts';

/** Column types a created table gets, inferred from the values the load sees. */
export type ColumnKind = 'unknown' | 'boolean' | 'integer' | 'bigint' | 'double precision' | 'numeric' | 'date' | 'timestamptz' | 'jsonb' | 'text';

const INT4 = 2147483647;
const INT8_MIN = -(2n ** 63n);
const INT8_MAX = 2n ** 63n - 1n;

/** The narrowest column kind for one non-null value. */
export function kindOf(v: unknown): ColumnKind {
  switch (typeof v) {
    case 'boolean':
      return 'boolean';
    case 'number':
      if (Number.isInteger(v)) return Math.abs(v) <= INT4 ? 'integer' : Number.isSafeInteger(v) ? 'bigint' : 'double precision';
      return 'double precision';
    case 'bigint':
      return v >= INT8_MIN && v <= INT8_MAX ? 'bigint' : 'numeric';
    case 'string':
      return 'text';
    case 'object':
      if (v === null) return 'unknown';
      if (v instanceof Date) return v.getTime() % 86_400_000 === 0 ? 'date' : 'timestamptz';
      return 'jsonb';
    default:
      return v === undefined ? 'unknown' : 'text';
  }
}

const NUMBERS: ColumnKind[] = ['integer', 'bigint', 'numeric'];

/** The narrowest kind holding values of both kinds (text when nothing narrower does). */
export function widen(a: ColumnKind, b: ColumnKind): ColumnKind {
  if (a === b || b === 'unknown') return a;
  if (a === 'unknown') return b;
  const pair = new Set([a, b]);
  if (NUMBERS.includes(a) && NUMBERS.includes(b)) return NUMBERS[Math.max(NUMBERS.indexOf(a), NUMBERS.indexOf(b))] as ColumnKind;
  if (pair.has('double precision') && pair.has('integer')) return 'double precision';
  if (pair.has('double precision') && (pair.has('bigint') || pair.has('numeric'))) return 'numeric';
  if (pair.has('date') && pair.has('timestamptz')) return 'timestamptz';
  return 'text';
}

/** The SQL type of a kind; a column never seen with a value is text. */
export const sqlType = (k: ColumnKind): string => (k === 'unknown' ? 'text' : k);

/** Broad families of existing columns, for the schema-mismatch check. */
export type Family = 'number' | 'integer' | 'boolean' | 'temporal' | 'json' | 'text' | 'other';

export function familyOf(dataType: string): Family {
  if (['smallint', 'integer', 'bigint'].includes(dataType)) return 'integer';
  if (['numeric', 'real', 'double precision', 'money'].includes(dataType)) return 'number';
  if (dataType === 'boolean') return 'boolean';
  if (dataType === 'date' || dataType.startsWith('timestamp')) return 'temporal';
  if (dataType === 'json' || dataType === 'jsonb') return 'json';
  if (dataType === 'text' || dataType.startsWith('character')) return 'text';
  return 'other';
}

const NUMERIC_TEXT = /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/;

/** Whether a value can go into an existing column of that family; a reason otherwise. */
export function fits(value: unknown, family: Family): boolean {
  switch (family) {
    case 'integer':
      return (typeof value === 'number' && Number.isInteger(value)) || typeof value === 'bigint' || (typeof value === 'string' && /^\s*[+-]?\d+\s*$/.test(value));
    case 'number':
      return typeof value === 'number' || typeof value === 'bigint' || (typeof value === 'string' && NUMERIC_TEXT.test(value));
    case 'boolean':
      return typeof value === 'boolean' || (typeof value === 'string' && /^(t|f|true|false|yes|no|on|off|1|0)$/i.test(value.trim()));
    case 'temporal':
      return value instanceof Date || typeof value === 'string';
    default:
      return true;
  }
}

/**
 * A quick test of a non-null value: true when it cannot change its column — a created column keeps
 * its kind, a value fits an existing column — so the schema check need not look at it. False says
 * nothing (the check looks).
 */
export type Settled = (v: unknown) => boolean;

/** Every value: a text column of a created table (it cannot widen further), a text/json/other column of an existing one. */
export const ANY_VALUE: Settled = () => true;
const NO_VALUE: Settled = () => false;
const isInt4: Settled = (v) => typeof v === 'number' && Number.isInteger(v) && Math.abs(v) <= INT4;
const isFraction: Settled = (v) => typeof v === 'number' && !Number.isInteger(v);
const isMidnight: Settled = (v) => v instanceof Date && v.getTime() % 86_400_000 === 0;
const isWhole: Settled = (v) => typeof v === 'number' && Number.isInteger(v);
const isNumber: Settled = (v) => typeof v === 'number';
const isBoolean: Settled = (v) => typeof v === 'boolean';
const isTemporal: Settled = (v) => v instanceof Date || typeof v === 'string';

/** Values whose kindOf is `kind` (a subset, tested quickly): a created column of that kind keeps it. */
export function settledKind(kind: ColumnKind): Settled {
  switch (kind) {
    case 'text':
      return ANY_VALUE;
    case 'integer':
      return isInt4;
    case 'double precision':
      return isFraction;
    case 'date':
      return isMidnight;
    default:
      return NO_VALUE;
  }
}

/** Values that fit an existing column of that family (a subset of what `fits` accepts, tested quickly). */
export function settledFamily(family: Family): Settled {
  switch (family) {
    case 'text':
    case 'json':
    case 'other':
      return ANY_VALUE;
    case 'integer':
      return isWhole;
    case 'number':
      return isNumber;
    case 'boolean':
      return isBoolean;
    case 'temporal':
      return isTemporal;
  }
}

/**
 * One pass over a batch for the load's schema check, compiled per column list (each field read with
 * a constant key): `look(i, v)` gets every non-null value of column i that `settled[i]` does not
 * pass, `extraRow(row)` every row with fields beyond the columns, both in row order (`look` may
 * replace `settled[i]`; later values are tested with the new one). Names enter the code only as
 * JSON string literals.
 */
export type RowScan = (rows: Row[], settled: Settled[], look: (i: number, v: unknown) => void, extraRow: (row: Row) => void) => void;

export function compileRowScan(names: string[]): RowScan {
  const cells = names.map((name, i) => `v = row[${JSON.stringify(name)}];
      if (v !== undefined) { present++; if (v !== null && !settled[${i}](v)) look(${i}, v); }`);
  const body = `return function scan(rows, settled, look, extraRow) {
    for (let r = 0; r < rows.length; r++) {
      const row = rows[r];
      let present = 0, fields = 0, v;
      ${cells.join('\n      ')}
      for (const _ in row) fields++;
      if (fields > present) extraRow(row);
    }
  };`;
  return new Function(body)() as RowScan;
}
