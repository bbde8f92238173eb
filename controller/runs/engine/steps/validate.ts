import { RE2JS } from 're2js';
import type { Batch, Row } from '../../types.ts';
import { type RuleSpec, StepConfigError, type StepContext, type StepRunner, isNullish, numberOf, rulesOf, show } from '../step.ts';
import { toText } from './convert.ts';

/** A check of one value: a problem sentence, or undefined when it passes. */
type Check = (v: unknown) => string | undefined;
type Rule = { field: string; name: string; check: Check; /** not_null: null and absent values are checked too. */ seesNull: boolean };

/** The reasons of a passing row: one shared empty array, never written to. */
const NONE: string[] = [];

// One local part, one domain with at least one dot, no spaces: what people mean by "an email address".
// Written for RE2 as `^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$`; run natively (≈10× faster than re2js) with RE2's
// `\s` spelled out (ASCII `[\t\n\f\r ]`: JavaScript's `\s` would also refuse \v and Unicode spaces).
// Linear on V8 too: `@` and `.` are outside the classes they separate, so nothing backtracks more than once.
export const EMAIL_RE2 = '^[^\\s@]+@[^\\s@.]+(\\.[^\\s@.]+)+$';
const EMAIL = /^[^\t\n\f\r @]+@[^\t\n\f\r @.]+(?:\.[^\t\n\f\r @.]+)+$/;

function param(r: RuleSpec, i: number, key: string, required: boolean): number | undefined {
  const v = r.params[key];
  if (v === undefined && !required) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new StepConfigError(`config.rules[${i}].params.${key} must be a number`);
  return v;
}

function compileRule(r: RuleSpec, i: number): Rule {
  const rule = (check: Check): Rule => ({ field: r.field, name: r.rule, check, seesNull: r.rule === 'not_null' });
  switch (r.rule) {
    case 'not_null':
      return rule((v) => (isNullish(v) ? 'is null' : undefined));
    case 'regex': {
      const pattern = r.params.pattern;
      if (typeof pattern !== 'string') throw new StepConfigError(`config.rules[${i}].params.pattern must be a string`);
      let re: RE2JS;
      try {
        re = RE2JS.compile(pattern);
      } catch (err) {
        throw new StepConfigError(`config.rules[${i}].params.pattern ${show(pattern)} is not a linear-time (RE2) regular expression: ${(err as Error).message}`);
      }
      return rule((v) => (re.matcher(toText(v)).find() ? undefined : `does not match ${show(pattern)}`));
    }
    case 'range': {
      const min = param(r, i, 'min', false);
      const max = param(r, i, 'max', false);
      return rule((v) => {
        const n = numberOf(v);
        if (n === undefined) return 'is not a number';
        if (min !== undefined && n < min) return `is below the minimum ${min}`;
        if (max !== undefined && n > max) return `is above the maximum ${max}`;
        return undefined;
      });
    }
    case 'min_length': {
      const length = param(r, i, 'length', true) as number;
      return rule((v) => (Array.from(toText(v)).length < length ? `is shorter than ${length} characters` : undefined));
    }
    case 'max_length': {
      const length = param(r, i, 'length', true) as number;
      return rule((v) => (Array.from(toText(v)).length > length ? `is longer than ${length} characters` : undefined));
    }
    case 'email':
      return rule((v) => (typeof v === 'string' && EMAIL.test(v) ? undefined : 'is not an email address'));
    default:
      throw new StepConfigError(`config.rules[${i}].rule ${show(r.rule)} is not a validate rule`);
  }
}

/** Every failing rule's reason for a row; NONE (never written to) when it passes. */
type RowChecks = (row: Row) => string[];

/**
 * The rules of one step as one function, compiled once: each field is read with a constant key (a
 * monomorphic property access instead of a keyed lookup per rule and row), every rule checked in
 * order. Field names enter the generated code only as JSON string literals.
 */
function compileRowChecks(rules: Rule[]): RowChecks {
  const reason = (i: number, value: unknown, problem: string): string => {
    const rule = rules[i] as Rule;
    return `${rule.name}: ${rule.field} = ${show(value)} ${problem}`;
  };
  const steps = rules.map((r, i) => {
    const check = `problem = check${i}(v);
      if (problem !== undefined) (reasons ??= []).push(reason(${i}, v, problem));`;
    return `v = row[${JSON.stringify(r.field)}];
    ${r.seesNull ? check : `if (v !== null && v !== undefined) { ${check} }`}`;
  });
  const body = `${rules.map((_, i) => `const check${i} = rules[${i}].check;`).join('\n')}
  return function checkRow(row) {
    let v, problem, reasons;
    ${steps.join('\n    ')}
    return reasons === undefined ? NONE : reasons;
  };`;
  return new Function('rules', 'reason', 'NONE', body)(rules, reason, NONE) as RowChecks;
}

/**
 * validate: every rule is checked on every row; a row failing any is rejected with every failing
 * reason. Only `not_null` looks at null/absent values: the other rules pass them (as SQL checks do).
 * `regex` uses RE2 (re2js: linear time) and matches anywhere in the value (anchor with ^…$).
 */
export class ValidateStep implements StepRunner {
  readonly #rules: Rule[];
  readonly #check: RowChecks;

  constructor(config: Record<string, unknown>) {
    this.#rules = rulesOf(config).map(compileRule);
    this.#check = compileRowChecks(this.#rules);
  }

  /** Every field this step reads. */
  get fields(): string[] {
    return this.#rules.map((r) => r.field);
  }

  /** Every failing rule's reason; the same empty array (no allocation) when the row passes. */
  reasons(row: Row): string[] {
    return this.#check(row);
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    const check = this.#check;
    for await (const batch of input) {
      const out: Batch = [];
      for (let i = 0; i < batch.length; i++) {
        const row = batch[i] as Row;
        const reasons = check(row);
        if (reasons !== NONE) ctx.reject(row, reasons);
        else out.push(row);
      }
      yield out;
    }
  }
}
