import type { Store } from '../store/db.ts';
import { ConflictError } from '../errors.ts';

/**
 * A client whose tenant may not act (docs/contract/design.md, "Tenant lifecycle"): SUSPENDED (its manifest says
 * `suspended: true`) or OFFBOARDED (its manifest removed, retained until its purge). Its keys and
 * members are refused its data and writes, and its runs are refused, while registry and status
 * reads still show it.
 */
export type ClientHold = 'suspended' | 'offboarded';

const HOLDS: Readonly<Record<string, ClientHold>> = { SUSPENDED: 'suspended', OFFBOARDED: 'offboarded' };

/** The hold on `clientId`, or undefined when its tenant may act (one primary-key read). */
export function clientHold(db: Store, clientId: string): ClientHold | undefined {
  const row = db.statements.prepare('SELECT status FROM clients WHERE client_id = ?').get(clientId) as { status: string } | undefined;
  return row ? HOLDS[row.status] : undefined;
}

/** The refusal's text: `Client ACME is suspended`. */
export const holdMessage = (clientId: string, hold: ClientHold): string => `Client ${clientId} is ${hold}`;

/** A run of a held client's pipeline: 409 (manual starts), skipped quietly by the schedules. */
export class ClientHeldError extends ConflictError {
  readonly clientId: string;
  readonly hold: ClientHold;

  constructor(clientId: string, hold: ClientHold) {
    super(holdMessage(clientId, hold));
    this.clientId = clientId;
    this.hold = hold;
  }
}
