import type { SourceType } from '../../kinds/pipeline/types.ts';
import { isPlainObject } from '../../objects.ts';
import type { RunReach } from '../reach.ts';
import type { Batch, ConnectionResolver, EgressPolicy, LogLevel, Row, RunStep } from '../types.ts';
import type { SourceLimits } from './sources/limits.ts';
import type { RawCells } from './raw-cells.ts';

/** What a step may do while it runs: refuse rows, log, see the cancel signal. */
export interface StepContext {
  readonly step: RunStep;
  readonly signal: AbortSignal;
  /** Records a refused row with every reason; the row is not passed on. */
  reject(row: Row, reasons: string[]): void;
  log(level: LogLevel, message: string): void;
}

/**
 * One step of a run: a transformer of the batch stream. `run` consumes `input` lazily and yields
 * batches in order; work that needs the whole stream (a merge, reconcile checks) happens after
 * the input is exhausted, before the generator returns. Throwing fails the step (and the run).
 */
export interface StepRunner {
  run(input: AsyncIterable<Batch>, ctx: StepContext): AsyncIterable<Batch>;
  /** Source steps: rows this step read itself (added to the run's `rowsRead`). */
  rowsRead?(): number;
  /** A one-line summary for the step record once it succeeded (e.g. inferred column types). */
  message?(): string | null;
  /** Reconcile steps: the result of each check. */
  checks?(): Record<string, unknown> | undefined;
}

/** A transaction left open until the whole run succeeded (loads and stages). */
export interface PendingWrite {
  commit(): Promise<void>;
  rollback(): Promise<void>;
}

/** What a reconcile step needs to know of the load before it. */
export interface LoadReport {
  stepId: string;
  /** `schema.table` as written. */
  target: string;
  /** Rows the load received and wrote. */
  rowsWritten: number;
  /** Rows counted in the destination for this run (replace: whole table, append: added, merge: staged). */
  countRowsInDestination(): Promise<number>;
  /** Columns of the destination table after the load. */
  destinationColumns(): Promise<string[]>;
  /** Non-null values seen per field. */
  nonNull: Map<string, number>;
}

/** Shared by the steps of one run. */
export interface RunScope {
  readonly runId: string;
  readonly pipelineId: string;
  readonly sourceType: SourceType;
  readonly connections: ConnectionResolver;
  readonly egress: EgressPolicy;
  /** What the run may reach by its pipeline's owner: credentials, pinned schemas, the files folder. Every step asks it. */
  readonly reach: RunReach;
  readonly signal: AbortSignal;
  readonly batchSize: number;
  readonly tmpDir: string;
  /** What one source response and one record may hold. */
  readonly limits: SourceLimits;
  /** Every field name a transform step mapped to (`fieldMappings[].target`), in step order. */
  readonly mappedFields: string[];
  /** Cells passed from the source to the load as COPY text, when the run's steps allow it (raw-cells.ts). */
  readonly rawCells: RawCells;
  /** Transactions to commit when the run succeeds, in step order. */
  readonly pending: PendingWrite[];
  /** Loads that finished writing, in step order (reconcile reads the last one). */
  readonly loads: LoadReport[];
  /** Rows read by sources so far and rows rejected so far (compareRowCounts). */
  rowsRead(): number;
  rowsRejected(): number;
  log(level: LogLevel, message: string): void;
}

/** A step's configuration error (bad params): fails the step with this message. */
export class StepConfigError extends Error {}

/** The one plain-object check, under the name the steps use. */
export const isObject = isPlainObject;

/** A value as a reason shows it: JSON, cut to 80 characters. */
export function show(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'undefined';
  else if (value instanceof Date) text = Number.isNaN(value.getTime()) ? 'Invalid Date' : JSON.stringify(value.toISOString());
  else if (typeof value === 'bigint') text = value.toString();
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

export const isNullish = (v: unknown): v is null | undefined => v === null || v === undefined;

/** A step config string, or undefined. */
export function configString(config: Record<string, unknown>, key: string): string | undefined {
  const v = config[key];
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

export function requireString(config: Record<string, unknown>, key: string, stepType: string): string {
  const v = configString(config, key);
  if (v === undefined) throw new StepConfigError(`${stepType} step needs config.${key}`);
  return v;
}

/** Rules of a transform/validate/quality step as `{field, rule, params}`. */
export interface RuleSpec {
  field: string;
  rule: string;
  params: Record<string, unknown>;
}

export function rulesOf(config: Record<string, unknown>): RuleSpec[] {
  const rules = Array.isArray(config.rules) ? config.rules : [];
  return rules.map((r, i) => {
    if (!isObject(r) || typeof r.field !== 'string' || typeof r.rule !== 'string') throw new StepConfigError(`config.rules[${i}] needs a field and a rule`);
    return { field: r.field, rule: r.rule, params: isObject(r.params) ? r.params : {} };
  });
}

export const sourceTypes: readonly SourceType[] = ['api', 'database', 'file', 's3'];

/** A value as a number: numbers, BigInts and numeric text; undefined otherwise. */
export function numberOf(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && v.trim() !== '') {
    const n = Number(v.trim());
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}
