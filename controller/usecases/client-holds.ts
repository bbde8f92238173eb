import { clientHold, clientsDueForPurge, readClient } from '../kinds/client/registry.ts';
import { pipelineIdsOwnedBy } from '../kinds/pipeline/store.ts';
import { runIdsOf } from '../runs/store.ts';
import type { ReconcileEvent } from '../reconciler/types.ts';
import type { LifecyclePorts } from './ports.ts';

/**
 * Follows Client outcomes: a suspended client's queued runs are cancelled (an offboarded one's
 * running runs too), and its transitions the reconcile phases do not show are notified
 * (`client.suspended`; `client.purge_due` once retention has passed).
 */
export class ClientHoldsObserver {
  readonly #rt: LifecyclePorts;
  /** Registry status last seen per client (notifications once per transition in this process). */
  readonly #seen = new Map<string, string>();
  readonly #dueNotified = new Set<string>();

  constructor(opts: { runtime: LifecyclePorts }) {
    this.#rt = opts.runtime;
  }

  onEvent(e: ReconcileEvent): void {
    if (e.type !== 'phase' || e.kind !== 'Client' || (e.phase !== 'Synced' && e.phase !== 'Pruned')) return;
    const clientId = this.#rt.reconciler.status.get(e.key)?.resourceIds.clientId;
    if (typeof clientId !== 'string') return;
    const row = readClient(this.#rt.db, clientId);
    if (!row) return;
    const previous = this.#seen.get(clientId);
    this.#seen.set(clientId, row.status);
    const hold = clientHold(this.#rt.db, clientId);
    if (!hold) return;
    void this.#stopRuns(clientId, hold === 'offboarded');
    if (hold === 'suspended' && previous !== 'SUSPENDED') this.#rt.notifications.onLifecycle('client.suspended', clientId, `Client/${clientId} suspended`);
  }

  /** Offboarded clients whose retention has passed: `client.purge_due` once each (per process). */
  checkDue(): string[] {
    const now = this.#rt.clock().toISOString();
    const fresh = clientsDueForPurge(this.#rt.db, now).filter((d) => !this.#dueNotified.has(d.clientId));
    for (const d of fresh) {
      this.#dueNotified.add(d.clientId);
      this.#rt.notifications.onLifecycle('client.purge_due', d.clientId, `Client/${d.clientId} was retained until ${d.retainUntil}: it may be purged`);
    }
    return fresh.map((d) => d.clientId);
  }

  async #stopRuns(clientId: string, running: boolean): Promise<void> {
    const rt = this.#rt;
    const runs = runIdsOf(rt.db, pipelineIdsOwnedBy(rt.db, clientId), running ? ['queued', 'running'] : ['queued']);
    for (const runId of runs) {
      try {
        await rt.runs.dispatcher.cancel(runId);
        rt.log.info({ clientId, runId }, 'run cancelled: its client is held');
      } catch {
        // Ended meanwhile.
      }
    }
  }
}
