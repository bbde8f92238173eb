import { clientHold } from '../authz/holds.ts';
import { readClient } from '../kinds/client/registry.ts';
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
    const due = this.#rt.db.statements
      .prepare("SELECT client_id, retain_until FROM clients WHERE status = 'OFFBOARDED' AND retain_until <= ? ORDER BY client_id")
      .all(now) as { client_id: string; retain_until: string }[];
    const fresh = due.filter((d) => !this.#dueNotified.has(d.client_id));
    for (const d of fresh) {
      this.#dueNotified.add(d.client_id);
      this.#rt.notifications.onLifecycle('client.purge_due', d.client_id, `Client/${d.client_id} was retained until ${d.retain_until}: it may be purged`);
    }
    return fresh.map((d) => d.client_id);
  }

  async #stopRuns(clientId: string, running: boolean): Promise<void> {
    const rt = this.#rt;
    const runs = rt.db.statements
      .prepare(
        `SELECT r.run_id FROM pipeline_runs r JOIN pipelines p ON p.pipeline_id = r.pipeline_id
         WHERE p.owner_client_id = ? AND r.status IN (${running ? "'queued', 'running'" : "'queued'"})`,
      )
      .all(clientId) as { run_id: string }[];
    for (const r of runs) {
      try {
        await rt.runs.dispatcher.cancel(r.run_id);
        rt.log.info({ clientId, runId: r.run_id }, 'run cancelled: its client is held');
      } catch {
        // Ended meanwhile.
      }
    }
  }
}
