import type { Phase } from '../types.ts';
import type { PhaseEvent, PruneBlockedEvent, ReconcileEvent } from '../reconciler/types.ts';
import type { RunOutcome } from '../runs/types.ts';
import type { Notification, NotificationEvent } from './types.ts';

/** What the tracker remembers of a key: its last phase and reason, so a repeat is recognized as one. */
export interface KnownOutcome {
  key: string;
  kind: string;
  name: string;
  phase: Phase;
  reason: string | null;
  /** Applied at least once and not pruned since. */
  live: boolean;
  revision: string | null;
}

export interface OutcomeTrackerOptions {
  /** The recorded state at start: a restart does not announce a failure already announced. */
  initial: Iterable<KnownOutcome>;
  /** The client (tenant) an object belongs to, when it belongs to one. */
  clientOf(kind: string, name: string): string | undefined;
  emit(notification: Notification): void;
}

interface Known {
  phase: Phase;
  reason: string | null;
  live: boolean;
  revision: string | null;
  clientId?: string;
}

const failing = (phase: Phase | undefined): boolean => phase === 'Failed' || phase === 'Invalid';

/**
 * Turns the reconciler's typed events into notifications: ONE per operation and outcome. A key
 * that fails again the same way (its retries with backoff) notifies nothing new; its recovery
 * notifies once; a refused mass prune is one message for all the keys it kept, and is not
 * repeated while the refusal stands. Knows nothing of delivery.
 */
export class OutcomeTracker {
  readonly #known = new Map<string, Known>();
  readonly #steps = new Map<string, string[]>();
  readonly #clientOf: OutcomeTrackerOptions['clientOf'];
  readonly #emit: (n: Notification) => void;
  #blocked: PruneBlockedEvent[] = [];
  readonly #failedRuns = new Set<string>();
  readonly #failedGit = new Set<string>();

  constructor(opts: OutcomeTrackerOptions) {
    this.#clientOf = opts.clientOf;
    this.#emit = opts.emit;
    for (const o of opts.initial) this.#known.set(o.key, { phase: o.phase, reason: o.reason, live: o.live, revision: o.revision });
  }

  onEvent(e: ReconcileEvent): void {
    if (e.type === 'step') {
      const steps = this.#steps.get(e.key) ?? [];
      steps.push(e.step);
      this.#steps.set(e.key, steps);
    } else if (e.type === 'prune-blocked') this.#pruneBlocked(e);
    else if (e.type === 'rollout-paused') {
      this.#emit({ events: ['clientset.paused'], subjects: [{ kind: e.kind, name: e.name }], kind: e.kind, name: e.name, message: e.message, at: e.at });
    } else this.#phase(e);
  }

  #phase(e: PhaseEvent): void {
    const prev = this.#known.get(e.key);
    const steps = this.#steps.get(e.key);
    this.#steps.delete(e.key);
    const clientId = this.#clientOf(e.kind, e.name) ?? prev?.clientId;
    const live = e.phase === 'Synced' ? true : e.phase === 'Pruned' ? false : (prev?.live ?? false);
    this.#known.set(e.key, { phase: e.phase, reason: e.reason, live, revision: e.phase === 'Synced' ? e.revision : (prev?.revision ?? null), clientId });
    // A refused prune released: the object stays as it was, nothing new happened to it.
    if (prev?.reason === 'prune-blocked' && prev.phase === e.phase) return;
    const events = this.#eventsFor(e, prev);
    if (!events) return;
    const subject = { kind: e.kind, name: e.name, ...(clientId ? { clientId } : {}) };
    const previousRevision = prev?.revision && prev.revision !== e.revision ? prev.revision : undefined;
    this.#emit({
      events,
      subjects: [subject],
      ...subject,
      ...(e.revision ? { revision: e.revision } : {}),
      message: describe(e, events[0]),
      changes: {
        phase: { from: prev?.phase ?? null, to: e.phase },
        ...(previousRevision ? { previousRevision } : {}),
        ...(failing(e.phase) && e.reason ? { failedStep: e.reason } : {}),
        ...(steps?.length ? { steps } : {}),
      },
      at: e.at,
    });
  }

  #eventsFor(e: PhaseEvent, prev: Known | undefined): NotificationEvent[] | undefined {
    const client = e.kind === 'Client';
    if (failing(e.phase)) {
      // The same failure again (a retry with backoff): already announced.
      if (prev && prev.phase === e.phase && prev.reason === e.reason) return undefined;
      return client ? ['client.failed', 'object.failed'] : ['object.failed'];
    }
    if (e.phase === 'Synced') {
      if (client && !prev?.live) return failing(prev?.phase) ? ['client.onboarded', 'object.recovered'] : ['client.onboarded'];
      return failing(prev?.phase) ? ['object.recovered'] : undefined;
    }
    // A removed Client manifest offboards the client (kept until its purge: `client.deleted`).
    if (e.phase === 'Pruned' && client && prev?.live) return ['client.offboarded'];
    return undefined;
  }

  /** Every key one refused prune kept arrives in the same tick: they become one message. */
  #pruneBlocked(e: PruneBlockedEvent): void {
    const prev = this.#known.get(e.key);
    if (prev?.reason === 'prune-blocked') return;
    if (prev) prev.reason = 'prune-blocked';
    else this.#known.set(e.key, { phase: 'Synced', reason: 'prune-blocked', live: true, revision: null });
    if (this.#blocked.push(e) === 1) queueMicrotask(() => this.#flushBlocked());
  }

  #flushBlocked(): void {
    const batch = this.#blocked;
    this.#blocked = [];
    const first = batch[0];
    if (!first) return;
    const subjects = batch.map((b) => {
      const clientId = this.#clientOf(b.kind, b.name) ?? this.#known.get(b.key)?.clientId;
      return { kind: b.kind, name: b.name, ...(clientId ? { clientId } : {}) };
    });
    this.#emit({
      events: ['prune.blocked'],
      subjects,
      kind: first.kind,
      name: first.name,
      message: `prune of ${batch.length} object(s) refused: ${first.message}`,
      changes: { blocked: batch.map((b) => b.key) },
      at: first.at,
    });
  }

  /** A finished pipeline run: every success, and a failure once until the pipeline succeeds again. */
  onRun(run: RunOutcome, at: Date): void {
    const name = run.pipelineName ?? run.pipelineId;
    if (run.status === 'cancelled') return;
    if (run.status === 'failed') {
      if (this.#failedRuns.has(run.pipelineId)) return;
      this.#failedRuns.add(run.pipelineId);
    } else this.#failedRuns.delete(run.pipelineId);
    const subject = { kind: 'Pipeline', name, ...(run.clientId ? { clientId: run.clientId } : {}) };
    this.#emit({
      events: [run.status === 'succeeded' ? 'run.succeeded' : 'run.failed'],
      subjects: [subject],
      ...subject,
      message:
        run.status === 'succeeded'
          ? `Pipeline/${name} run ${run.runId} succeeded: ${run.rowsRead} rows read, ${run.rowsWritten} written, ${run.rowsRejected} rejected`
          : `Pipeline/${name} run ${run.runId} failed${run.failedStep ? ` at ${run.failedStep}` : ''}: ${withoutStep(run.error ?? 'unknown error', run.failedStep)}`,
      changes: {
        ...(run.failedStep ? { failedStep: run.failedStep } : {}),
        run: { runId: run.runId, status: run.status, durationMs: run.durationMs, rowsRead: run.rowsRead, rowsWritten: run.rowsWritten, rowsRejected: run.rowsRejected },
      },
      at: at.toISOString(),
    });
  }

  /**
   * A lifecycle transition the registry shows and no phase does: `client.suspended`,
   * `client.purge_due` (retention passed), `client.deleted` (purged).
   */
  onLifecycle(event: 'client.suspended' | 'client.purge_due' | 'client.deleted', clientId: string, message: string, at: Date): void {
    const subject = { kind: 'Client', name: clientId, clientId };
    this.#emit({ events: [event], subjects: [subject], ...subject, message, at: at.toISOString() });
  }

  /** A git fetch or push: a failure once until that operation succeeds again. */
  onGit(op: 'fetch' | 'push', branch: string, error: string | undefined, at: Date): void {
    if (error === undefined) {
      this.#failedGit.delete(op);
      return;
    }
    if (this.#failedGit.has(op)) return;
    this.#failedGit.add(op);
    this.#emit({ events: ['git.failed'], subjects: [], kind: 'Git', name: branch, message: `git ${op} of ${branch} failed: ${error}`, at: at.toISOString() });
  }
}

function describe(e: PhaseEvent, event: NotificationEvent): string {
  const id = `${e.kind}/${e.name}`;
  const at = e.revision ? ` at revision ${e.revision.slice(0, 12)}` : '';
  switch (event) {
    case 'object.failed':
    case 'client.failed': {
      return `${id} ${e.phase === 'Invalid' ? 'is invalid' : 'failed'}${e.reason ? ` (${e.reason})` : ''}${at}: ${withoutStep(e.message, e.reason)}`;
    }
    case 'object.recovered':
      return `${id} recovered: Synced${at}`;
    case 'client.onboarded':
      return `${id} onboarded${at}`;
    case 'client.offboarded':
      return `${id} offboarded (its manifest was removed); kept until its purge`;
    default:
      return `${id}: ${e.phase}`;
  }
}

/** A recorded message starts with its step (`create model: …`); the notification says the step once. */
function withoutStep(message: string, step: string | null | undefined): string {
  return step && message.startsWith(`${step}: `) ? message.slice(step.length + 2) : message;
}
