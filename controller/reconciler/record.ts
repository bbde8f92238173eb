import type { Clock, Manifest } from '../types.ts';
import type { StatusRecord, StatusStore } from './status.ts';
import type { ReconcileEvent, ReconcileResult } from './types.ts';

/** Facts about the file behind a result, kept in the status row beside it. */
export interface RecordFacts {
  path?: string | null;
  hash?: string | null;
  /** Set on a successful apply (null on a prune). */
  specHash?: string | null;
  /** The revision this attempt came from. */
  revision?: string | null;
  /** The result applied this revision (lastAppliedRevision moves). */
  applied?: boolean;
  actor?: string;
  /** A result that changes nothing visible (an unchanged key run again): no event. */
  quiet?: boolean;
  /** How long the run took (carried on the event, for the duration metric). */
  durationMs?: number;
  /** The ClientSet that generated the object (`ClientSet/<name>`), null for a file's object. */
  generatedBy?: string | null;
  inputId?: string | null;
  /** The API key an API write came with: the audit actor is `{type: key, id}`. */
  keyId?: string;
  /** The manifest a successful apply applied (kept as the object's applied version). */
  manifest?: Manifest;
}

export interface RecorderOptions {
  status: StatusStore;
  clock: Clock;
  emit(event: ReconcileEvent): void;
  /** Told of every recorded result, in the transaction that records it (the audit log). */
  observe?(result: ReconcileResult, facts: RecordFacts, previous: StatusRecord | undefined): void;
}

/**
 * The one place where outcomes are recorded: each typed result becomes the key's status row
 * and one event. Nothing else writes phases, reasons or messages.
 */
export class Recorder {
  readonly #status: StatusStore;
  readonly #clock: Clock;
  readonly #emit: (event: ReconcileEvent) => void;
  readonly #observe: RecorderOptions['observe'];

  constructor(opts: RecorderOptions) {
    this.#status = opts.status;
    this.#clock = opts.clock;
    this.#emit = opts.emit;
    this.#observe = opts.observe;
  }

  record(result: ReconcileResult, facts: RecordFacts = {}): StatusRecord {
    const { row, event } = this.write(result, facts);
    if (event) this.#emit(event);
    return row;
  }

  /**
   * `record` without its event: the row is written and the event returned, for a caller that
   * writes the row in its own transaction and emits once it has committed (`emit`).
   */
  write(result: ReconcileResult, facts: RecordFacts = {}): { row: StatusRecord; event?: ReconcileEvent } {
    const now = this.#clock();
    const prev = this.#status.get(result.key);
    this.#observe?.(result, facts, prev);
    const failed = result.phase === 'Failed';
    const row = this.#status.put(
      result.key,
      {
        kind: result.kind,
        name: result.name,
        phase: result.phase,
        reason: result.reason,
        message: result.message,
        resourceIds: result.resourceIds,
        attempts: failed ? (prev?.attempts ?? 0) + 1 : result.phase === 'Invalid' ? (prev?.attempts ?? 0) : 0,
        nextRetryAt: result.retryAfterMs === null ? null : new Date(now.getTime() + result.retryAfterMs).toISOString(),
        ...(facts.path !== undefined ? { path: facts.path } : {}),
        ...(facts.hash !== undefined ? { hash: facts.hash } : {}),
        ...(facts.specHash !== undefined ? { specHash: facts.specHash } : {}),
        ...(facts.actor !== undefined ? { actor: facts.actor } : {}),
        ...(facts.generatedBy !== undefined ? { generatedBy: facts.generatedBy, inputId: facts.inputId ?? null } : {}),
        ...(facts.revision !== undefined ? { lastAttemptedRevision: facts.revision ?? prev?.lastAttemptedRevision ?? null } : {}),
        ...(facts.applied ? { lastAppliedRevision: facts.revision ?? null } : {}),
      },
      now,
      { prev },
    );
    if (facts.quiet) return { row };
    return {
      row,
      event: {
        type: 'phase',
        key: row.key,
        kind: row.kind,
        name: row.name,
        phase: row.phase,
        reason: row.reason,
        message: row.message,
        revision: row.lastAttemptedRevision,
        at: now.toISOString(),
        ...(facts.durationMs !== undefined ? { durationMs: facts.durationMs } : {}),
      },
    };
  }

  emit(event: ReconcileEvent): void {
    this.#emit(event);
  }

  /** The mass-prune guard kept `row` in place: its phase stays, the reason says why it was not pruned. */
  pruneBlocked(row: StatusRecord, message: string): void {
    const now = this.#clock();
    this.#status.put(row.key, { kind: row.kind, name: row.name, reason: 'prune-blocked', message }, now);
    this.#emit({ type: 'prune-blocked', key: row.key, kind: row.kind, name: row.name, message, at: now.toISOString() });
  }

  /** A refused prune no longer stands (the file is back, or the next sync decided otherwise). */
  releasePruneBlock(row: StatusRecord): void {
    this.record({ ...resultOf(row), reason: null, message: '' });
  }

  /** An apply step started. */
  step(key: string, kind: string, name: string, step: string): void {
    this.#emit({ type: 'step', key, kind, name, step, at: this.#clock().toISOString() });
  }

  /** Drops the row of a key that owns nothing (a never-valid file, a never-applied object). */
  forget(key: string): void {
    this.#status.delete(key);
  }
}

/** The result a status row records (what a caller waiting on a key that did not run sees). */
export function resultOf(row: StatusRecord): ReconcileResult {
  return {
    key: row.key,
    kind: row.kind,
    name: row.name,
    phase: row.phase,
    reason: row.reason,
    message: row.message,
    resourceIds: row.resourceIds,
    retryAfterMs: null,
  };
}
