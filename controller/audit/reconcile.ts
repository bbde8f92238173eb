import type { Store } from '../store/db.ts';
import type { RecordFacts } from '../reconciler/record.ts';
import type { StatusRecord } from '../reconciler/status.ts';
import type { ReconcileResult } from '../reconciler/types.ts';
import { actorOf, appendAudit } from './log.ts';
import type { Clock } from '../types.ts';

/**
 * The audit entry of a recorded reconcile result: a change of desired state applied (`apply`,
 * with the spec digest before and after, the git revision and author, or the API caller, or the
 * controller for a file in directory mode), a prune (`prune`), or the first failure of an apply
 * (`apply`, result `failed`; its retries add nothing). Unchanged keys add nothing.
 */
export function auditRecorded(db: Store, clock: Clock, ownerOf: (key: string) => string | null) {
  return (result: ReconcileResult, facts: RecordFacts, previous: StatusRecord | undefined): void => {
    const pruned = result.phase === 'Pruned';
    const applied = result.phase === 'Synced' && facts.applied === true;
    const firstFailure = result.phase === 'Failed' && result.reason !== 'store' && previous?.phase !== 'Failed';
    if (!pruned && !applied && !firstFailure) return;
    const clientId = result.kind === 'Client' ? result.resourceIds.clientId : ownerOf(result.key);
    appendAudit(
      db,
      {
        actor: !pruned && facts.keyId ? { type: 'key', id: facts.keyId } : actorOf(pruned ? 'controller' : facts.actor, facts.revision),
        action: pruned ? 'prune' : 'apply',
        ...(typeof clientId === 'string' ? { clientId } : {}),
        object: { kind: result.kind, id: result.key.slice(result.key.indexOf('/') + 1) },
        ...(previous?.specHash ? { before: previous.specHash } : {}),
        ...(applied && facts.specHash ? { after: facts.specHash } : {}),
        result: firstFailure ? 'failed' : 'ok',
      },
      clock,
    );
  };
}
