import type { ClientHold } from '../contract.ts';
import { ConflictError } from '../errors.ts';

/** The refusal's text for a held client (docs/contract/design.md, "Tenant lifecycle"): `Client ACME is suspended`. */
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
