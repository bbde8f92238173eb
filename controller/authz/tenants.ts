import type { Principal } from '../auth/principal.ts';
import type { UserRights } from '../auth/rights.ts';

/** The clients a caller may act for: every client, or a list (possibly empty). */
export type Tenants = 'all' | readonly string[];

/**
 * Effective tenants = the user's current rights ∩ the key's scope (docs/contract/design.md: a key never does
 * more than its user). An admin's session or unscoped key: every client; a scoped key: its
 * client; a member: the granted clients, and through a key only its (granted) client.
 */
export function effectiveTenants(rights: UserRights, clientScope: string | undefined, via: Principal['via']): Tenants {
  if (rights.role === 'admin') return clientScope ? [clientScope] : 'all';
  if (via === 'session') return rights.clients;
  return clientScope && rights.clients.includes(clientScope) ? [clientScope] : [];
}

/** The caller's tenants; a principal built without them (tests, the CLI) gets the narrowest reading. */
export function tenantsOf(p: Principal): Tenants {
  if (p.tenants) return p.tenants;
  if (p.clientScope) return [p.clientScope];
  return p.role === 'admin' ? 'all' : [];
}

/** Whether the caller acts for every client (an admin, not confined by a key's scope). */
export function isUnconfined(p: Principal): boolean {
  return tenantsOf(p) === 'all';
}

/** Whether an object owned by `owner` (null: no client) is within the caller's tenants. */
export function withinTenants(p: Principal, owner: string | null | undefined): boolean {
  const t = tenantsOf(p);
  if (t === 'all') return true;
  return typeof owner === 'string' && t.includes(owner);
}
