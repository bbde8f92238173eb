import type { Batch, Row } from '../../types.ts';
import { type RuleSpec, StepConfigError, type StepContext, type StepRunner, isObject, rulesOf, show } from '../step.ts';
import { Refusal, padTrim, toDate, toDecimal, toInteger, toText } from './convert.ts';

/** A rule's conversion of a non-null value: the new value, or a Refusal (the row is rejected). */
type Rule = { field: string; name: string; convert: (v: unknown) => unknown };

const NONE: string[] = [];

function compileRule(r: RuleSpec, i: number): Rule {
  const rule = (convert: (v: unknown) => unknown): Rule => ({ field: r.field, name: r.rule, convert });
  const textOnly = (fn: (s: string) => string): Rule => rule((v) => (typeof v === 'string' ? fn(v) : v));
  switch (r.rule) {
    case 'to_integer':
      return rule(toInteger);
    case 'to_decimal':
      return rule(toDecimal);
    case 'to_date':
      return rule(toDate);
    case 'to_string':
      return rule(toText);
    case 'uppercase':
      return textOnly((s) => s.toUpperCase());
    case 'lowercase':
      return textOnly((s) => s.toLowerCase());
    case 'trim':
      return textOnly((s) => s.trim());
    case 'pad_trim': {
      const { length, padChar } = r.params;
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 1) throw new StepConfigError(`config.rules[${i}].params.length must be an integer of at least 1`);
      if (typeof padChar !== 'string' || Array.from(padChar).length !== 1) throw new StepConfigError(`config.rules[${i}].params.padChar must be one character`);
      return rule((v) => padTrim(v, length, padChar));
    }
    default:
      throw new StepConfigError(`config.rules[${i}].rule ${show(r.rule)} is not a transform rule`);
  }
}

/** Applies the rules to a row in place; answers every failing rule's reason, NONE when it passed. */
type RowRules = (row: Row) => string[];

/**
 * The rules of one step as one function, compiled once: each field is read and written with a
 * constant key (a monomorphic property access instead of a keyed lookup per rule and row), rule by
 * rule in order; a null or absent value is left as it is. With `restore`, a refused row gets its
 * original values back (written back in reverse order, from one local per rule: nothing is
 * allocated for a row that passes). Field names enter the generated code only as JSON string literals.
 */
function compileRowRules(rules: Rule[], restore: boolean): RowRules {
  const reason = (i: number, value: unknown, problem: string): string => {
    const rule = rules[i] as Rule;
    return `${rule.name}: ${rule.field} = ${show(value)} ${problem}`;
  };
  const key = (i: number): string => JSON.stringify((rules[i] as Rule).field);
  const steps = rules.map(
    (_, i) => `v = row[${key(i)}];
    if (v !== null && v !== undefined) {
      next = convert${i}(v);
      if (next instanceof Refusal) (reasons ??= []).push(reason(${i}, v, next.problem));
      else if (next !== v) { ${restore ? `o${i} = v; ` : ''}row[${key(i)}] = next; }
    }`,
  );
  const undo = restore ? rules.map((_, i) => `if (o${i} !== UNSET) row[${key(i)}] = o${i};`).reverse() : [];
  const body = `${rules.map((_, i) => `const convert${i} = rules[${i}].convert;`).join('\n')}
  return function applyRules(row) {
    let v, next, reasons${restore ? rules.map((_, i) => `, o${i} = UNSET`).join('') : ''};
    ${steps.join('\n    ')}
    if (reasons === undefined) return NONE;
    ${undo.join('\n    ')}
    return reasons;
  };`;
  return new Function('rules', 'Refusal', 'reason', 'NONE', 'UNSET', body)(rules, Refusal, reason, NONE, Symbol('unset')) as RowRules;
}

/**
 * transform: `fieldMappings` rename `source` → `target` first (other fields kept, a row without the
 * source field gets no target), then `rules` in order on the new names. A null or absent value stays
 * as it is; a value that does not convert rejects the row (every failing rule named).
 */
export class TransformStep implements StepRunner {
  readonly #mappings: { source: string; target: string }[];
  readonly #rules: Rule[];
  readonly #apply: RowRules;

  constructor(config: Record<string, unknown>) {
    const mappings = Array.isArray(config.fieldMappings) ? config.fieldMappings : [];
    this.#mappings = mappings.map((m, i) => {
      if (!isObject(m) || typeof m.source !== 'string' || typeof m.target !== 'string') throw new StepConfigError(`config.fieldMappings[${i}] needs a source and a target`);
      return { source: m.source, target: m.target };
    });
    this.#rules = rulesOf(config).map(compileRule);
    // Without mappings a row is converted in place: a refused row gets its original values back.
    this.#apply = compileRowRules(this.#rules, this.#mappings.length === 0);
  }

  /** Mapped field names (reconcile's screen map). */
  get targets(): string[] {
    return this.#mappings.map((m) => m.target);
  }

  /** Every field this step reads or writes: mapping sources and targets, rule fields. */
  get fields(): string[] {
    return [...this.#mappings.flatMap((m) => [m.source, m.target]), ...this.#rules.map((r) => r.field)];
  }

  /**
   * The row with mappings and rules applied, or the reasons it was refused. Without mappings the
   * row is converted in place (no copy per row); a refused row gets its original values back.
   */
  apply(input: Row): { row: Row; reasons: string[] } {
    const row = this.#mapped(input);
    return { row, reasons: this.#apply(row) };
  }

  /** The row with the field mappings applied: a copy when there are mappings, else the row itself. */
  #mapped(input: Row): Row {
    if (this.#mappings.length === 0) return input;
    const row = { ...input };
    for (const m of this.#mappings) if (m.source in input) delete row[m.source];
    for (const m of this.#mappings) if (m.source in input) row[m.target] = input[m.source];
    return row;
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    for await (const batch of input) {
      const out: Batch = [];
      for (let i = 0; i < batch.length; i++) {
        const row = batch[i] as Row;
        const converted = this.#mapped(row);
        const reasons = this.#apply(converted);
        if (reasons !== NONE) ctx.reject(row, reasons);
        else out.push(converted);
      }
      yield out;
    }
  }
}
