import { ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { clientResources, offboardPlan, type OffboardPlan } from '../kinds/client/resources.ts';
import { readClient } from '../kinds/client/registry.ts';
import type { ClientRefs } from '../kinds/client/types.ts';
import { manifestKey } from '../manifest/loader.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { Reconciler } from '../reconciler/reconciler.ts';
import type { StatusRecord } from '../reconciler/status.ts';
import type { Store } from '../store/db.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import type { Principal } from '../auth/principal.ts';

/** What finding a client's manifest row needs. */
export interface ClientRowPorts {
  readonly db: Store;
  readonly reconciler: Pick<Reconciler, 'status'>;
}

/** What offboarding needs of the controller. */
export interface OffboardPorts extends ClientRowPorts {
  readonly locks: KeyedMutex;
  readonly submitter: Pick<ManifestSubmitter, 'withdraw'>;
}

/** The reconcile row of a client's manifest (the registry names it; API onboarding names it `Client/<ID>`). */
export function clientManifestRow(rt: ClientRowPorts, clientId: string): StatusRecord | undefined {
  const key = readClient(rt.db, clientId)?.manifest_key ?? manifestKey('Client', clientId);
  return rt.reconciler.status.get(key);
}

/** What the prune of the client's manifest would remove and keep, or undefined when nothing can be withdrawn. */
export function planOffboarding(rt: ClientRowPorts, clientId: string): OffboardPlan | undefined {
  const row = clientManifestRow(rt, clientId);
  if (!row || !row.path || row.phase === 'Pruned') return undefined;
  return offboardPlan(rt.db, row.key, row.path, row.resourceIds as Partial<ClientRefs>, clientResources(rt.db, clientId));
}

export interface Offboarded {
  clientId: string;
  plan: OffboardPlan;
  /** The manifest's reconcile row after the withdrawal (Pruned, or Failed when the prune failed). */
  manifest: { key: string; phase: string; message: string } | null;
}

/**
 * Offboarding: the client's manifest is withdrawn through the one write path (removed, or a
 * commit removing it in git mode) and its removal reconciled at once, so the reconciler prunes
 * what the manifest created. `confirm` must repeat the client ID (the console's typed name).
 */
export class OffboardClient {
  readonly #rt: OffboardPorts;

  constructor(opts: { runtime: OffboardPorts }) {
    this.#rt = opts.runtime;
  }

  async run(clientId: string, confirm: unknown, caller: Principal): Promise<Offboarded> {
    const rt = this.#rt;
    if (typeof confirm !== 'string' || confirm.trim().toUpperCase() !== clientId) {
      throw new ValidationError([{ path: 'confirm', message: `confirm must repeat the client ID ${clientId}` }]);
    }
    return rt.locks.run(manifestKey('Client', clientId), async () => {
      const row = clientManifestRow(rt, clientId);
      if (!row && !readClient(rt.db, clientId)) throw new NotFoundError(`Client ${clientId} not found`);
      const plan = planOffboarding(rt, clientId);
      if (!row || !plan || !row.path) throw new ConflictError(`Client ${clientId} has no manifest to withdraw`);
      await rt.submitter.withdraw(row.path, caller, `offboard client ${clientId}`);
      const after = rt.reconciler.status.get(row.key);
      return { clientId, plan, manifest: after ? { key: after.key, phase: after.phase, message: after.message } : null };
    });
  }
}
