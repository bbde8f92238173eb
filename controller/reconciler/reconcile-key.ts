import type { Store } from '../store/db.ts';
import { boundMessage, formatProblem, StepError } from '../errors.ts';
import type { IdAllocator } from '../store/ids.ts';
import { ACTOR_ANNOTATION, type Applier, type Clock, type Manifest } from '../types.ts';
import { backoffDelay, type BackoffPolicy } from '../lib/backoff.ts';
import type { Desired } from './desired.ts';
import type { RecordFacts } from './record.ts';
import { isLive, type StatusRecord } from './status.ts';
import type { ReconcileResult } from './types.ts';

/** A result and the facts to record beside it. */
export interface KeyOutcome {
  result: ReconcileResult;
  facts: RecordFacts;
}

export interface KeyReconcilerOptions {
  db: Store;
  ids: IdAllocator;
  appliers: ReadonlyMap<string, Applier>;
  clock: Clock;
  random: () => number;
  backoff: BackoffPolicy;
  /** An apply step started (server-sent to the UI). */
  onStep(key: string, kind: string, name: string, step: string): void;
}

/**
 * Reconciles one key: applies its manifest with its kind's applier in ONE transaction, or prunes
 * what it owned. Returns a typed result (phase, reason = the failing step, message, resource IDs,
 * when to retry); it records nothing itself.
 */
export class KeyReconciler {
  readonly #o: KeyReconcilerOptions;

  constructor(opts: KeyReconcilerOptions) {
    this.#o = opts;
  }

  /** The manifest is unchanged since its last successful apply: nothing to do but note where it came from. */
  unchanged(row: StatusRecord, desired: Desired): KeyOutcome {
    return {
      result: { key: row.key, kind: row.kind, name: row.name, phase: 'Synced', reason: null, message: '', resourceIds: row.resourceIds, retryAfterMs: null },
      facts: {
        path: desired.path,
        hash: desired.hash,
        revision: desired.revision ?? null,
        generatedBy: desired.generatedBy ?? null,
        inputId: desired.inputId ?? null,
        quiet: row.phase === 'Synced' && row.reason === null && (row.generatedBy ?? null) === (desired.generatedBy ?? null),
      },
    };
  }

  apply(key: string, manifest: Manifest, desired: Desired, row: StatusRecord | undefined, specHash: string): KeyOutcome {
    const { db, ids, clock } = this.#o;
    const applier = this.#o.appliers.get(manifest.kind);
    const now = clock();
    const kind = manifest.kind;
    const name = manifest.metadata.name;
    const actor = manifest.metadata.annotations?.[ACTOR_ANNOTATION] ?? desired.author ?? 'controller';
    const facts: RecordFacts = {
      path: desired.path,
      hash: desired.hash,
      actor,
      revision: desired.revision ?? null,
      generatedBy: desired.generatedBy ?? null,
      inputId: desired.inputId ?? null,
      ...(desired.keyId ? { keyId: desired.keyId } : {}),
    };
    const previous = row && isLive(row) ? row.resourceIds : undefined;
    try {
      if (!applier) throw new StepError('apply', `no applier for kind ${kind}`);
      const problems = applier.lint?.(manifest) ?? [];
      if (problems.length === 0) problems.push(...(applier.check?.(db, manifest) ?? []));
      if (problems.length) throw new StepError('validate', problems.map(formatProblem).join('; '));
      const refs = db.transaction(() =>
        applier.apply({ db, ids, now, key, manifest, previous, actor, step: (step) => this.#o.onStep(key, kind, name, step) }),
      )();
      return {
        result: { key, kind, name, phase: 'Synced', reason: null, message: '', resourceIds: refs, retryAfterMs: null },
        facts: { ...facts, specHash, applied: true, manifest },
      };
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      try {
        if (applier?.recordFailure) db.transaction(() => applier.recordFailure?.({ db, now, key, manifest, actor, error }))();
      } catch {
        // The audit entry is best effort; the status still records the failure.
      }
      return {
        result: {
          key,
          kind,
          name,
          phase: 'Failed',
          reason: error instanceof StepError ? error.step : 'apply',
          message: boundMessage(error.message),
          resourceIds: row?.resourceIds ?? {},
          retryAfterMs: this.#retryAfter(row),
        },
        facts,
      };
    }
  }

  prune(row: StatusRecord): KeyOutcome {
    const { db, clock } = this.#o;
    const applier = this.#o.appliers.get(row.kind);
    const base = { key: row.key, kind: row.kind, name: row.name };
    try {
      if (!applier) throw new StepError('prune', `no applier for kind ${row.kind}`);
      db.transaction(() => applier.prune({ db, now: clock(), key: row.key, name: row.name, previous: row.resourceIds, actor: 'controller' }))();
      return { result: { ...base, phase: 'Pruned', reason: null, message: '', resourceIds: row.resourceIds, retryAfterMs: null }, facts: { specHash: null } };
    } catch (err) {
      return {
        result: { ...base, phase: 'Failed', reason: 'prune', message: boundMessage(`prune: ${(err as Error).message}`), resourceIds: row.resourceIds, retryAfterMs: this.#retryAfter(row) },
        facts: {},
      };
    }
  }

  #retryAfter(row: StatusRecord | undefined): number {
    return backoffDelay((row?.attempts ?? 0) + 1, this.#o.backoff, this.#o.random);
  }
}
