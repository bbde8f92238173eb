import type { Batch } from '../../types.ts';
import { readJsonFile } from '../sources/files.ts';
import { type LoadReport, type RunScope, type StepContext, type StepRunner, configString, isObject } from '../step.ts';

export interface ReconcileCounts {
  /** Rows read by the sources before the load, and rows rejected by the steps up to it. */
  read: number;
  rejected: number;
}

/**
 * reconcile: checks the load before it, inside that load's transaction (the engine commits only
 * after every step succeeded): `compareRowCounts` (rows in the destination for this run = rows
 * read − rows rejected up to the load), `checkFieldCompleteness` (non-null share per field,
 * reported, never failing), `screenMapEnabled` (every mapped field is a destination column; the
 * mapped fields are the transform `fieldMappings` targets, or with `mappingSource: custom` the
 * fields of the mapping file). Any failing check fails the step; the load is then not committed.
 */
export class ReconcileStep implements StepRunner {
  readonly #config: Record<string, unknown>;
  readonly #scope: RunScope;
  readonly #countsUpTo: (stepId: string) => ReconcileCounts;
  #checks: Record<string, unknown> | undefined;

  constructor(config: Record<string, unknown>, scope: RunScope, countsUpTo: (stepId: string) => ReconcileCounts) {
    this.#config = config;
    this.#scope = scope;
    this.#countsUpTo = countsUpTo;
  }

  checks(): Record<string, unknown> | undefined {
    return this.#checks;
  }

  message(): string | null {
    if (!this.#checks) return null;
    return Object.entries(this.#checks)
      .map(([name, c]) => `${name} ${isObject(c) && c.passed === false ? 'failed' : 'passed'}`)
      .join(', ');
  }

  async *run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch> {
    yield* input;
    const load = this.#scope.loads.at(-1);
    if (!load) throw new Error('reconcile needs a load step before it');
    const checks: Record<string, unknown> = {};
    this.#checks = checks;
    const failures: string[] = [];
    if (this.#config.compareRowCounts !== false) {
      const counts = this.#countsUpTo(load.stepId);
      const expected = counts.read - counts.rejected;
      const actual = await load.countRowsInDestination();
      checks.compareRowCounts = { passed: expected === actual, rowsRead: counts.read, rowsRejected: counts.rejected, expected, actual };
      if (expected !== actual) failures.push(`compareRowCounts: ${load.target} holds ${actual} rows of this run, expected ${expected} (read ${counts.read} − rejected ${counts.rejected})`);
    }
    if (this.#config.checkFieldCompleteness !== false) {
      checks.checkFieldCompleteness = { passed: true, fields: completeness(load) };
    }
    if (this.#config.screenMapEnabled !== false) {
      const fields = await this.#mappedFields();
      const columns = new Set(await load.destinationColumns());
      const missing = fields.filter((f) => !columns.has(f));
      checks.screenMapEnabled = { passed: missing.length === 0, mappingSource: this.#custom ? 'custom' : 'default', fields, missing };
      if (missing.length > 0) failures.push(`screenMapEnabled: mapped field(s) ${missing.join(', ')} missing in ${load.target}`);
    }
    ctx.log(failures.length > 0 ? 'error' : 'info', `reconcile ${load.target}: ${this.message()}`);
    if (failures.length > 0) throw new Error(failures.join('; '));
  }

  get #custom(): boolean {
    return this.#config.mappingSource === 'custom';
  }

  /** The fields the screen map expects in the destination. */
  async #mappedFields(): Promise<string[]> {
    if (!this.#custom) return [...new Set(this.#scope.mappedFields)];
    const file = configString(this.#config, 'mappingFile') ?? `mappings/${this.#scope.pipelineId}.json`;
    const doc = await readJsonFile(this.#scope.reach.filesDir(), file).catch((err: Error) => {
      throw new Error(`screenMapEnabled: the custom mapping file ${file} could not be read: ${err.message}`);
    });
    return mappingFields(doc, file);
  }
}

/** A custom mapping file: `["field", …]`, `[{source, target}, …]` or `{fieldMappings: [...]}`. */
export function mappingFields(doc: unknown, file: string): string[] {
  const list = isObject(doc) && Array.isArray(doc.fieldMappings) ? doc.fieldMappings : doc;
  if (!Array.isArray(list)) throw new Error(`screenMapEnabled: ${file} must hold a list of fields or {source, target} mappings`);
  return list.map((item, i) => {
    if (typeof item === 'string') return item;
    if (isObject(item) && typeof item.target === 'string') return item.target;
    throw new Error(`screenMapEnabled: ${file} item ${i} must be a field name or {source, target}`);
  });
}

function completeness(load: LoadReport): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [field, n] of load.nonNull) out[field] = load.rowsWritten === 0 ? 1 : Math.round((n / load.rowsWritten) * 1e4) / 1e4;
  return out;
}
