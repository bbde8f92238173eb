import { describe, expect, it } from 'vitest';
import { type ColumnKind, type Family, fits, kindOf, settledFamily, settledKind, widen } from '../../../../controller/runs/engine/load/columns.ts';
import { compileBatchEncoder, encoderFor } from '../../../../controller/runs/engine/load/copy-text.ts';

describe('COPY text encoding', () => {
  it('escapes backslash, tab, newline and CR; writes \\N for null/absent; types per column; counts non-null cells', () => {
    const encode = compileBatchEncoder(['id', 'note', 'day', 'at', 'ok', 'doc', 'odd "name"'], ['integer', 'text', 'date', 'timestamptz', 'boolean', 'jsonb', 'text']);
    const nonNull = new Float64Array(7);
    const text = encode(
      [
        { id: 1, note: 'a\\b\tc\nd\re', day: new Date('2026-03-04T00:00:00Z'), at: new Date('2026-03-04T05:06:07.008Z'), ok: true, doc: { k: 'v\t' }, 'odd "name"': 'x' },
        { id: null, note: 42, ok: false },
      ],
      nonNull,
    ).toString('utf8');
    expect(text).toBe(
      '1\ta\\\\b\\tc\\nd\\re\t2026-03-04\t2026-03-04T05:06:07.008Z\tt\t{"k":"v\\\\t"}\tx\n' + '\\N\t42\t\\N\t\\N\tf\t\\N\t\\N\n',
    );
    expect([...nonNull]).toEqual([1, 2, 1, 1, 2, 1, 1]);
  });

  it('writes what the per-value encoders write, byte for byte: unicode around escapes, every kind of number, batches beyond the first buffer', () => {
    const columns = ['n', 't', 'v'];
    const types = ['double precision', 'text', 'character varying'];
    const numbers = [0, -0, 7, -7, 10, 99, 100, 2147483647, -2147483647, 2147483648, -2147483648, 1e21, 0.1, -1.5e-7, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53];
    const texts = ['', 'ü', 'ü\tx\\y\n', 'a\rb ü \\', '😀\t', 'plain', 'tab\tthen ünï', 'x'.repeat(70_000), `${'é'.repeat(30_000)}\n`, '\\N'];
    const rows = [];
    for (let i = 0; i < 400; i++) rows.push({ n: numbers[i % numbers.length], t: texts[i % texts.length], v: i % 7 === 0 ? null : i % 5 === 0 ? 12.5 : texts[(i * 3) % texts.length] });
    const encoders = types.map(encoderFor);
    const expected = rows
      .map((row) => columns.map((c, i) => (row[c as 'n'] === null ? '\\N' : (encoders[i] as (v: unknown) => string)(row[c as 'n']))).join('\t'))
      .join('\n');
    const encode = compileBatchEncoder(columns, types);
    const nonNull = new Float64Array(3);
    expect(encode(rows, nonNull).toString('utf8')).toBe(`${expected}\n`);
    expect(encode(rows.slice(0, 2), nonNull).toString('utf8')).toBe(`${expected.split('\n').slice(0, 2).join('\n')}\n`);
    expect(encode([], nonNull).length).toBe(0);
  });

  it('strings of every length around the one-call write, ASCII or not: text columns escaped, raw columns as they are, other types through their encoder', () => {
    const strings: string[] = [];
    for (const n of [0, 1, 12, 13, 23, 24, 25, 26, 40, 300]) for (const tail of ['', 'ü', '\\', '\t', '😀', '\r\n']) strings.push(`${'abcdefghij'.repeat(30).slice(0, n)}${tail}`);
    const types = ['text', 'text', 'jsonb', 'date', 'integer'];
    const rows = strings.map((s, i) => ({ t: s, r: s, j: s, d: s, n: i % 2 === 0 ? s : 1.25 }));
    const encoders = types.map(encoderFor);
    const expected = rows.map((row) => [encoders[0]?.(row.t), row.r, encoders[2]?.(row.j), encoders[3]?.(row.d), encoders[4]?.(row.n)].join('\t'));
    const encode = compileBatchEncoder(['t', 'r', 'j', 'd', 'n'], types, [undefined, 'pass']);
    expect(encode(rows, new Float64Array(5)).toString('utf8')).toBe(`${expected.join('\n')}\n`);
  });

  it('the schema check\'s quick tests pass only values that keep a created column\'s kind or fit an existing column', () => {
    const values: unknown[] = [0, -0, 1, -1, 2147483647, -2147483647, -2147483648, 2147483648, 2 ** 53, 1.5, -0.25, Number.NaN, Number.POSITIVE_INFINITY, 5n, true, 'x', '12', '', new Date('2026-01-02T00:00:00Z'), new Date('2026-01-02T00:00:01Z'), new Date(-86_400_000), new Date(Number.NaN), { a: 1 }, [1]];
    const kinds: ColumnKind[] = ['unknown', 'boolean', 'integer', 'bigint', 'double precision', 'numeric', 'date', 'timestamptz', 'jsonb', 'text'];
    const families: Family[] = ['number', 'integer', 'boolean', 'temporal', 'json', 'text', 'other'];
    for (const v of values) {
      for (const k of kinds) if (settledKind(k)(v)) expect([k, v, widen(k, kindOf(v))]).toEqual([k, v, k]);
      for (const f of families) if (settledFamily(f)(v)) expect([f, v, fits(v, f)]).toEqual([f, v, true]);
    }
    // and they do pass the usual values (else they would save nothing)
    expect([settledKind('integer')(7), settledKind('double precision')(0.5), settledKind('date')(values[18]), settledFamily('number')(7)]).toEqual([true, true, true, true]);
  });

  it('numbers are written as String(v) writes them: integers, amounts of two decimals (digit by digit) and every other double', () => {
    let seed = 42;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const values = [-0, 0.5, -0.5, 0.07, -0.07, 1.1, 0.1 + 0.2, 0.1 + 0.7, 123456789.12, -999999999.99, 1e9 + 0.5, 2147483647, 2147483648, -2147483648, 1e-7, 5e-324, 1e21];
    for (let i = 0; i < 20_000; i++) {
      const r = Math.floor((next() - 0.5) * 2e11);
      values.push(r / 100, r / 10, r / 1000, (next() - 0.5) * 10 ** Math.floor(next() * 14));
    }
    const text = compileBatchEncoder(['n'], ['double precision'])(values.map((n) => ({ n })), new Float64Array(1)).toString('utf8');
    expect(text.split('\n').slice(0, -1)).toEqual(values.map(String));
  });

  it('column kinds widen to the narrowest type holding every value seen', () => {
    expect(kindOf(1)).toBe('integer');
    expect(kindOf(2 ** 40)).toBe('bigint');
    expect(kindOf(1.5)).toBe('double precision');
    expect(kindOf(new Date('2026-01-01T00:00:00Z'))).toBe('date');
    expect(kindOf(new Date('2026-01-01T00:00:01Z'))).toBe('timestamptz');
    expect(widen('integer', 'bigint')).toBe('bigint');
    expect(widen('integer', 'double precision')).toBe('double precision');
    expect(widen('date', 'timestamptz')).toBe('timestamptz');
    expect(widen('unknown', 'boolean')).toBe('boolean');
    expect(widen('integer', 'text')).toBe('text');
  });
});
