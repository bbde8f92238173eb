import { describe, expect, it } from 'vitest';
import { RE2JS } from 're2js';
import { EMAIL_RE2, ValidateStep } from '../../../../controller/runs/engine/steps/validate.ts';
import { runStep } from './harness.ts';

describe('validate step', () => {
  it('rejects a row failing any rule with every failing reason', async () => {
    const step = new ValidateStep({
      rules: [
        { field: 'id', rule: 'not_null' },
        { field: 'email', rule: 'email' },
        { field: 'age', rule: 'range', params: { min: 0, max: 120 } },
        { field: 'code', rule: 'regex', params: { pattern: '^[A-Z]{3}$' } },
        { field: 'name', rule: 'min_length', params: { length: 2 } },
        { field: 'name', rule: 'max_length', params: { length: 5 } },
      ],
    });
    const good = { id: 1, email: 'a@b.co', age: 120, code: 'ABC', name: 'Ada' };
    const bad = { id: null, email: 'nope', age: 121, code: 'abcd', name: 'Adalbert' };
    const { out, rejects } = await runStep(step, [[good, bad]]);
    expect(out).toEqual([good]);
    expect(rejects).toEqual([
      {
        row: bad,
        reasons: [
          'not_null: id = null is null',
          'email: email = "nope" is not an email address',
          'range: age = 121 is above the maximum 120',
          'regex: code = "abcd" does not match "^[A-Z]{3}$"',
          'max_length: name = "Adalbert" is longer than 5 characters',
        ],
      },
    ]);
  });

  it('range bounds are inclusive and each optional; rules other than not_null pass null values', () => {
    const step = new ValidateStep({ rules: [{ field: 'n', rule: 'range', params: { min: 1 } }, { field: 'm', rule: 'email' }] });
    expect(step.reasons({ n: 1, m: null })).toEqual([]);
    expect(step.reasons({ n: 0.5 })).toEqual(['range: n = 0.5 is below the minimum 1']);
    expect(step.reasons({ n: 'x' })).toEqual(['range: n = "x" is not a number']);
  });

  it('regex runs in linear time (RE2): a catastrophic pattern for backtracking engines stays fast', () => {
    const step = new ValidateStep({ rules: [{ field: 's', rule: 'regex', params: { pattern: '^(a+)+$' } }] });
    // A backtracking engine would not finish this within the test's timeout.
    expect(step.reasons({ s: `${'a'.repeat(50_000)}!` })).toHaveLength(1);
  });

  it('a pattern RE2 cannot run (lookahead, backreference) fails the step with a clear message', () => {
    expect(() => new ValidateStep({ rules: [{ field: 's', rule: 'regex', params: { pattern: '(?=a)a' } }] })).toThrow(/not a linear-time \(RE2\) regular expression/);
  });

  it('email answers exactly what its RE2 pattern answers (RE2 \\s is ASCII: \\v and Unicode spaces are not spaces)', () => {
    const re2 = RE2JS.compile(EMAIL_RE2);
    const step = new ValidateStep({ rules: [{ field: 'e', rule: 'email' }] });
    const samples = ['a@b.c', 'a.b+c@d-e.fg.hi', 'a b@c.d', 'a\tb@c.d', 'a\nb@c.d', 'a\rb@c.d', 'a\fb@c.d', 'a\vb@c.d', 'a\u00a0b@c.d', 'a\u2003b@c.d'];
    samples.push('a@b.c\n', '\na@b.c', 'a@b..c', 'a@b.c.', 'a@.b.c', '@b.c', 'a@b', 'a@@b.c', 'é@ü.ñ', '😀@x.y', 'a@b.😀', '\ud800@b.c', 'a@b.c@d.e', '', '.@.', 'x@y.z ', ' x@y.z');
    for (const s of samples) expect([s, step.reasons({ e: s }).length === 0]).toEqual([s, re2.matcher(s).find()]);
    // linear: a long near-miss answers at once
    expect(step.reasons({ e: `${'a'.repeat(100_000)}@${'b'.repeat(100_000)}` })).toHaveLength(1);
  });
  it('the compiled checks answer what checking rule by rule answers, for null, absent and odd values', () => {
    const rules = [
      { field: 'id', rule: 'not_null' },
      { field: 'email', rule: 'email' },
      { field: 'n', rule: 'range', params: { min: 0, max: 10 } },
      { field: 'n', rule: 'not_null' },
      { field: 'code', rule: 'regex', params: { pattern: '^a' } },
      { field: '__proto__', rule: 'max_length', params: { length: 2 } },
    ];
    const step = new ValidateStep({ rules });
    // each rule alone: the reasons of a row are theirs, in rule order
    const single = rules.map((r) => new ValidateStep({ rules: [r] }));
    const values: unknown[] = [null, undefined, '', 'a@b.co', 'a b@c.d', 'abc', 5, 11, -0, Number.NaN, ' 7 ', 2n, new Date(0), { a: 1 }, [1]];
    for (let i = 0; i < values.length ** 2; i++) {
      const at = (k: number): unknown => values[(i * (k + 2) + Math.floor(i / values.length)) % values.length];
      const row: Record<string, unknown> = { id: at(0), email: at(1), n: at(2), code: at(3) };
      Object.defineProperty(row, '__proto__', { value: at(4), enumerable: true, writable: true, configurable: true });
      expect(step.reasons(row)).toEqual(single.flatMap((s) => s.reasons(row)));
    }
  });
});
