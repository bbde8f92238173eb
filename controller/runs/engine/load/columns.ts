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
