import { describe, expect, it } from 'vitest';
import { StepConfigError } from '../../../../controller/runs/engine/step.ts';
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
});
