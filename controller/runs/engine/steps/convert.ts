/**
 * Value conversions of transform rules: each answers the new value, or a Refusal naming the
 * problem. Refusals are made once per sentence (nothing is allocated for a value that converts).
 */
export class Refusal {
  constructor(readonly problem: string) {}
}

const refusals = new Map<string, Refusal>();
/** The one Refusal of this sentence. */
function no(problem: string): Refusal {
  let r = refusals.get(problem);
  if (r === undefined) refusals.set(problem, (r = new Refusal(problem)));
  return r;
}

const DECIMAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;

export function toInteger(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? v : no('is not a whole number');
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string') {
    const s = v.trim();
    if (s === '') return null;
    // "12.0" is a whole number written as a decimal: it converts; "12.5" does not (no silent rounding).
    const whole = /^([+-]?\d+)(\.0*)?$/.exec(s);
    if (!whole) return no('does not convert to an integer');
    const n = Number(whole[1]);
    return Number.isSafeInteger(n) ? n : BigInt(whole[1] as string);
  }
  return no('does not convert to an integer');
}

export function toDecimal(v: unknown): unknown {
  if (typeof v === 'number') return Number.isFinite(v) ? v : no('is not a finite number');
  if (typeof v === 'bigint') return v;
  if (typeof v === 'string') {
    const s = v.trim();
    if (s === '') return null;
    if (!DECIMAL.test(s)) return no('does not convert to a decimal');
    const n = Number(s);
    return Number.isFinite(n) ? n : no('is out of range for a decimal');
  }
  return no('does not convert to a decimal');
}

export function toText(v: unknown): string {
  if (v instanceof Date) return v.toISOString();
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return String(v);
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?$/;

/** Strict ISO 8601: the fields must name a real calendar day and time (`2027-02-30` is refused). */
function realDate(y: number, mo: number, d: number): boolean {
  const t = new Date(Date.UTC(y, mo - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d;
}

/** A date (`YYYY-MM-DD` → UTC midnight) or a date-time (no offset → UTC); a Date passes. */
export function toDate(v: unknown): unknown {
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? no('is not a valid date') : v;
  if (typeof v !== 'string') return no('does not convert to a date');
  const s = v.trim();
  if (s === '') return null;
  const d = DATE.exec(s);
  if (d) {
    const [y, mo, day] = [Number(d[1]), Number(d[2]), Number(d[3])];
    return realDate(y, mo, day) ? new Date(Date.UTC(y, mo - 1, day)) : no('is not a real calendar date');
  }
  const t = DATETIME.exec(s);
  if (!t) return no('does not convert to a date (ISO 8601 expected)');
  const [y, mo, day, h, mi, sec] = [1, 2, 3, 4, 5, 6].map((i) => Number(t[i] ?? 0)) as [number, number, number, number, number, number];
  if (!realDate(y, mo, day) || h > 23 || mi > 59 || sec > 59) return no('is not a real calendar date and time');
  const offset = t[8];
  const iso = `${t[1]}-${t[2]}-${t[3]}T${t[4]}:${t[5]}:${t[6] ?? '00'}${t[7] ? `.${t[7].slice(0, 3).padEnd(3, '0')}` : ''}${
    !offset || offset === 'Z' ? 'Z' : offset.includes(':') ? offset : `${offset.slice(0, 3)}:${offset.slice(3)}`
  }`;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? no('does not convert to a date') : date;
}

/** Left-pads with `padChar` to `length`, or keeps the first `length` characters. */
export function padTrim(v: unknown, length: number, padChar: string): string {
  const chars = Array.from(toText(v));
  if (chars.length >= length) return chars.slice(0, length).join('');
  return padChar.repeat(length - chars.length) + chars.join('');
}
