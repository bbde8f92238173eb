import type { Batch, Row } from '../../types.ts';
import { type RuleSpec, StepConfigError, type StepContext, type StepRunner, isObject, rulesOf, show } from '../step.ts';
import { type Converted, padTrim, toDate, toDecimal, toInteger, toText } from './convert.ts';

/** `apply` may refuse a value; `map` never does (no result object per value). */
type Rule = { field: string; name: string; apply: (v: unknown) => Converted; map?: (v: unknown) => unknown };

const same = (value: unknown): Converted => ({ ok: true, value });
const NONE: string[] = [];

function compileRule(r: RuleSpec, i: number): Rule {
  const textOnly = (fn: (s: string) => string): Pick<Rule, 'apply' | 'map'> => {
    const map = (v: unknown): unknown => (typeof v === 'string' ? fn(v) : v);
    return { map, apply: (v) => same(map(v)) };
  };
  switch (r.rule) {
    case 'to_integer':
      return { field: r.field, name: r.rule, apply: toInteger };
    case 'to_decimal':
      return { field: r.field, name: r.rule, apply: toDecimal };
    case 'to_date':
      return { field: r.field, name: r.rule, apply: toDate };
    case 'to_string':
      return { field: r.field, name: r.rule, map: toText, apply: (v) => same(toText(v)) };
    case 'uppercase':
      return { field: r.field, name: r.rule, ...textOnly((s) => s.toUpperCase()) };
    case 'lowercase':
      return { field: r.field, name: r.rule, ...textOnly((s) => s.toLowerCase()) };
    case 'trim':
      return { field: r.field, name: r.rule, ...textOnly((s) => s.trim()) };
    case 'pad_trim': {
      const { length, padChar } = r.params;
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 1) throw new StepConfigError(`config.rules[${i}].params.length must be an integer of at least 1`);
      if (typeof padChar !== 'string' || Array.from(padChar).length !== 1) throw new StepConfigError(`config.rules[${i}].params.padChar must be one character`);
      return { field: r.field, name: r.rule, apply: (v) => same(padTrim(v, length, padChar)) };
    }
    default:
      throw new StepConfigError(`config.rules[${i}].rule ${show(r.rule)} is not a transform rule`);
  }
}

/**
 * transform: `fieldMappings` rename `source` → `target` first (other fields kept, a row without the
 * source field gets no target), then `rules` in order on the new names. A null or absent value stays
 * as it is; a value that does not convert rejects the row (every failing rule named).
 */
export class TransformStep implements StepRunner {
  readonly #mappings: { source: string; target: string }[];
  readonly #rules: Rule[];

  constructor(config: Record<string, unknown>) {
    const mappings = Array.isArray(config.fieldMappings) ? config.fieldMappings : [];
    this.#mappings = mappings.map((m, i) => {
      if (!isObject(m) || typeof m.source !== 'string' || typeof m.target !== 'string') throw new StepConfigError(`config.fieldMappings[${i}] needs a source and a target`);
      return { source: m.source, target: m.target };
    });
    this.#rules = rulesOf(config).map(compileRule);
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
    const row = this.#apply(input);
    return { row, reasons: this.#reasons };
  }

  /** Reasons of the last `#apply` (the shared empty array when the row passed). */
  #reasons: string[] = NONE;

  #apply(input: Row): Row {
    let row = input;
    if (this.#mappings.length > 0) {
      row = { ...input };
      for (const m of this.#mappings) if (m.source in input) delete row[m.source];
      for (const m of this.#mappings) if (m.source in input) row[m.target] = input[m.source];
    }
    let reasons: string[] | undefined;
    let originals: [string, unknown][] | undefined;
    const rules = this.#rules;
    for (let i = 0; i < rules.length; i++) {
      const rule = rules[i] as Rule;
      const value = row[rule.field];
      if (value === null || value === undefined) continue;
      let next: unknown;
      if (rule.map) next = rule.map(value);
      else {
        const out = rule.apply(value);
        if (!out.ok) {
          (reasons ??= []).push(`${rule.name}: ${rule.field} = ${show(value)} ${out.problem}`);
          continue;
        }
        next = out.value;
      }
      if (next !== value) {
        if (row === input) (originals ??= []).push([rule.field, value]);
        row[rule.field] = next;
      }
    }
    if (reasons && originals) for (const [field, value] of originals.reverse()) row[field] = value;
    this.#reasons = reasons ?? NONE;
    return row;
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    for await (const batch of input) {
      const out: Batch = [];
      for (let i = 0; i < batch.length; i++) {
        const row = batch[i] as Row;
        const converted = this.#apply(row);
        if (this.#reasons !== NONE) ctx.reject(row, this.#reasons);
        else out.push(converted);
      }
      yield out;
    }
  }
}
