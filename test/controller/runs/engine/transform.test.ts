import { describe, expect, it } from 'vitest';
import { StepConfigError, show } from '../../../../controller/runs/engine/step.ts';
import { Refusal, padTrim, toDate, toDecimal, toInteger, toText } from '../../../../controller/runs/engine/steps/convert.ts';
import { TransformStep } from '../../../../controller/runs/engine/steps/transform.ts';
import { runStep } from './harness.ts';

describe('transform step', () => {
  it('renames by fieldMappings first, then applies rules by the new names, keeping other fields', async () => {
    const step = new TransformStep({
      fieldMappings: [{ source: 'orderId', target: 'order_id' }, { source: 'Name', target: 'name' }],
      rules: [
        { field: 'order_id', rule: 'to_integer' },
        { field: 'name', rule: 'trim' },
        { field: 'name', rule: 'uppercase' },
      ],
    });
    const { out, rejects } = await runStep(step, [[{ orderId: '42', Name: '  ada ', extra: true }]]);
    expect(out).toEqual([{ order_id: 42, name: 'ADA', extra: true }]);
    expect(rejects).toEqual([]);
    expect(step.targets).toEqual(['order_id', 'name']);
  });

  it('rejects a row whose value does not convert, naming the field and the value', async () => {
    const step = new TransformStep({ rules: [{ field: 'qty', rule: 'to_integer' }, { field: 'price', rule: 'to_decimal' }, { field: 'day', rule: 'to_date' }] });
    const { out, rejects } = await runStep(step, [[{ qty: 'abc', price: '1.5x', day: '2027-02-30' }, { qty: '7', price: '2.25', day: '2026-01-31' }]]);
    expect(out).toEqual([{ qty: 7, price: 2.25, day: new Date('2026-01-31T00:00:00Z') }]);
    expect(rejects).toHaveLength(1);
    expect(rejects[0]?.reasons).toEqual([
      'to_integer: qty = "abc" does not convert to an integer',
      'to_decimal: price = "1.5x" does not convert to a decimal',
      'to_date: day = "2027-02-30" is not a real calendar date',
    ]);
  });

  it('converts: integers (no silent rounding), decimals, strings, dates with offsets, nulls untouched', () => {
    const step = new TransformStep({
      rules: [
        { field: 'a', rule: 'to_integer' },
        { field: 'b', rule: 'to_string' },
        { field: 'c', rule: 'to_date' },
        { field: 'd', rule: 'to_integer' },
        { field: 'e', rule: 'lowercase' },
      ],
    });
    expect(step.apply({ a: '12.0', b: 5, c: '2026-03-01T10:00:00+02:00', d: null, e: 'MiXed' })).toEqual({
      row: { a: 12, b: '5', c: new Date('2026-03-01T08:00:00Z'), d: null, e: 'mixed' },
      reasons: [],
    });
    expect(step.apply({ a: '12.5' }).reasons).toEqual(['to_integer: a = "12.5" does not convert to an integer']);
    expect(step.apply({ a: '9007199254740993' }).row.a).toBe(9007199254740993n);
  });

  it('pad_trim left-pads to the length with padChar, or cuts to it', () => {
    const step = new TransformStep({ rules: [{ field: 'code', rule: 'pad_trim', params: { length: 5, padChar: '0' } }] });
    expect(step.apply({ code: 42 }).row.code).toBe('00042');
    expect(step.apply({ code: 'ABCDEFG' }).row.code).toBe('ABCDE');
  });

  it('refuses an unknown rule or bad pad_trim params before any row', () => {
    expect(() => new TransformStep({ rules: [{ field: 'x', rule: 'explode' }] })).toThrow(StepConfigError);
    expect(() => new TransformStep({ rules: [{ field: 'x', rule: 'pad_trim', params: { length: 0, padChar: '0' } }] })).toThrow(/length/);
  });
  it('the compiled rules answer what rule-by-rule application answers: chains on one field, nulls, refusals restoring the row, mappings', () => {
    const rules = [
      { field: 'a', rule: 'trim' },
      { field: 'a', rule: 'to_decimal' },
      { field: 'b', rule: 'to_integer' },
      { field: 'c', rule: 'uppercase' },
      { field: 'c', rule: 'pad_trim', params: { length: 3, padChar: '*' } },
      { field: 'd', rule: 'to_date' },
      { field: 'e', rule: 'to_string' },
      { field: '__proto__', rule: 'lowercase' },
    ];
    const conversions: Record<string, (v: unknown) => unknown> = {
      trim: (v) => (typeof v === 'string' ? v.trim() : v),
      uppercase: (v) => (typeof v === 'string' ? v.toUpperCase() : v),
      lowercase: (v) => (typeof v === 'string' ? v.toLowerCase() : v),
      to_decimal: toDecimal,
      to_integer: toInteger,
      to_date: toDate,
      to_string: toText,
      pad_trim: (v) => padTrim(v, 3, '*'),
    };
    // the rules one at a time on a copy of the row: the reference
    const reference = (input: Record<string, unknown>): { row: Record<string, unknown>; reasons: string[] } => {
      const row = { ...input };
      const reasons: string[] = [];
      for (const r of rules) {
        const v = row[r.field];
        if (v === null || v === undefined) continue;
        const next = (conversions[r.rule] as (v: unknown) => unknown)(v);
        if (next instanceof Refusal) reasons.push(`${r.rule}: ${r.field} = ${show(v)} ${next.problem}`);
        else row[r.field] = next;
      }
      return reasons.length > 0 ? { row: input, reasons } : { row, reasons };
    };
    const values: unknown[] = [null, undefined, '', ' ', ' 12 ', '1.5', '-0.00', '1e3', '1.5x', 'abc', '2026-02-30', '2026-01-31', 12, 12.5, Number.NaN, Number.POSITIVE_INFINITY, 2n ** 70n, true, new Date('2026-01-01T00:00:00Z'), { k: 1 }, 'tab\tünï'];
    const step = new TransformStep({ rules });
    for (let i = 0; i < values.length ** 2; i++) {
      const at = (k: number): unknown => values[(i * (k + 1) + Math.floor(i / values.length) * k) % values.length];
      const input: Record<string, unknown> = { a: at(0), b: at(1), c: at(2), d: at(3), e: at(4), other: 'kept' };
      Object.defineProperty(input, '__proto__', { value: at(5), enumerable: true, writable: true, configurable: true });
      const before = { ...input };
      const expected = reference(before);
      const got = step.apply(input);
      expect([before, got.reasons, { ...got.row }]).toEqual([before, expected.reasons, { ...expected.row }]);
      // a refused row is the row it was, values and all
      if (got.reasons.length > 0) expect(got.row).toBe(input);
    }
  });

  it('with fieldMappings the compiled rules work on the renamed copy and leave the input as it was', async () => {
    const step = new TransformStep({ fieldMappings: [{ source: 'p', target: 'price' }], rules: [{ field: 'price', rule: 'to_decimal' }, { field: 'q', rule: 'to_integer' }] });
    const good = { p: '2.50', q: '3' };
    const bad = { p: '2.50', q: 'x' };
    const { out, rejects } = await runStep(step, [[good, bad]]);
    expect(out).toEqual([{ price: 2.5, q: 3 }]);
    expect(good).toEqual({ p: '2.50', q: '3' });
    expect(rejects).toEqual([{ row: { p: '2.50', q: 'x' }, reasons: ['to_integer: q = "x" does not convert to an integer'] }]);
  });
});
