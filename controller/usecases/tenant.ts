import { ForbiddenError } from '../errors.ts';
import type { Principal } from '../auth/principal.ts';

/**
 * Refuses a call for `clientId` made with a key scoped to another tenant. Keys without a scope,
 * and sessions, may act for any client. Call it in onboard and import routes once the target
 * client is known.
 */
export function assertTenant(principal: Principal | undefined, clientId: string): void {
  const scope = principal?.clientScope;
  if (scope && scope !== clientId.trim().toUpperCase()) throw new ForbiddenError(`API key is scoped to client ${scope}`);
}
