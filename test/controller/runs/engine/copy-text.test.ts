import { describe, expect, it } from 'vitest';
import { kindOf, widen } from '../../../../controller/runs/engine/load/columns.ts';
import { compileBatchEncoder } from '../../../../controller/runs/engine/load/copy-text.ts';

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
    );
    expect(text).toBe(
      '1\ta\\\\b\\tc\\nd\\re\t2026-03-04\t2026-03-04T05:06:07.008Z\tt\t{"k":"v\\\\t"}\tx\n' + '\\N\t42\t\\N\t\\N\tf\t\\N\t\\N\n',
    );
    expect([...nonNull]).toEqual([1, 2, 1, 1, 2, 1, 1]);
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
