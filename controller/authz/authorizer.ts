import { connectionTaken } from '../kinds/connection/store.ts';
import type { Principal } from '../auth/principal.ts';
import { ConflictError, ForbiddenError } from '../errors.ts';
import type { Ownership } from '../contract.ts';
import { isUnconfined, tenantsOf, withinTenants } from './tenants.ts';
import { holdMessage } from './holds.ts';

/** What an authorization question is about. */
export type Target =
  /** The platform itself: users, sync, settings, core models, connections of the wizard. */
  | { kind: 'platform' }
  | { kind: 'client'; clientId: string }
  | { kind: 'connection'; connectionId: string }
  | { kind: 'vdm'; vdmId: string }
  | { kind: 'dashboard'; facadeId: string }
  | { kind: 'pipeline'; pipelineId: string }
  /** A reconcile status row or event, by manifest key (`Client/ACME`). */
  | { kind: 'manifest'; key: string }
  /** Another user's keys. */
  | { kind: 'user'; userId: string };

/**
 * `read`: see it (outside the caller's tenants it answers as if it did not exist); `use`:
 * reference it from something the caller creates; `onboard`: create or re-create that client;
 * `run`: start or read the runs of a pipeline (the same rule as reading it: a run belongs to its
 * pipeline's owner; controller/runs/access.ts asks `can(p, 'run', {kind: 'pipeline', pipelineId})`);
 * `admin`: manage it (admins only).
 */
export type Action = 'read' | 'use' | 'onboard' | 'run' | 'admin';

export const ADMIN_REQUIRED = 'Admin role required';

/**
 * The one authorization module: "may principal P do action A on object O". Every route and use
 * case asks it; none decides tenancy on its own.
 */
export class Authorizer {
  readonly #owners: Ownership;

  /** `owners`: the kinds' ownership facet (controller/kinds/ownership.ts): who owns what, and which clients are held. */
  constructor(opts: { owners: Ownership }) {
    this.#owners = opts.owners;
  }

  can(p: Principal, action: Action, target: Target): boolean {
    const owners = this.#owners;
    // An unconfined admin may touch every tenant's objects: no owner lookup on the hot paths
    // (whether the object exists is the caller's own question: 404 / unknown-ID texts).
    if (target.kind !== 'platform' && target.kind !== 'user' && isUnconfined(p)) return true;
    switch (target.kind) {
      case 'platform':
        return p.role === 'admin' && isUnconfined(p);
      case 'user':
        // Their own keys: any user; another user's: admins.
        return target.userId === p.userId || this.can(p, 'admin', { kind: 'platform' });
      case 'client': {
        if (action === 'admin') return this.can(p, 'admin', { kind: 'platform' });
        const clientId = target.clientId.trim().toUpperCase();
        // The registry read still shows a suspended or offboarded client to its tenant.
        return action === 'read' ? withinTenants(p, clientId) : this.#within(p, clientId);
      }
      case 'connection': {
        const c = owners.connection(target.connectionId);
        if (!c) return false;
        return (action === 'use' && c.shared) || this.#within(p, c.owner);
      }
      case 'vdm': {
        const owner = owners.vdm(target.vdmId);
        return owner !== undefined && this.#within(p, owner);
      }
      case 'dashboard': {
        const owner = owners.dashboard(target.facadeId);
        return owner !== undefined && this.#within(p, owner);
      }
      case 'pipeline': {
        const owner = owners.pipeline(target.pipelineId);
        return owner !== undefined && this.#within(p, owner);
      }
      case 'manifest':
        return withinTenants(p, owners.manifest(target.key));
    }
  }

  /**
   * Within a confined caller's tenants, and that tenant not held: a suspended or offboarded
   * client's keys and members get 403 `Client <ID> is suspended` / `… is offboarded` (not 404:
   * the client is theirs, only it may not act now).
   */
  #within(p: Principal, owner: string | null | undefined): boolean {
    if (!withinTenants(p, owner)) return false;
    if (typeof owner === 'string') this.requireNotHeld(owner);
    return true;
  }

  /** Throws 403 `Client <ID> is suspended` (or `offboarded`) when the client is held. */
  requireNotHeld(clientId: string): void {
    const hold = this.#owners.hold(clientId);
    if (hold) throw new ForbiddenError(holdMessage(clientId, hold));
  }

  /** Throws 403 `Admin role required` unless the caller is an unconfined admin. */
  requireAdmin(p: Principal): void {
    if (!this.can(p, 'admin', { kind: 'platform' })) throw new ForbiddenError(ADMIN_REQUIRED);
  }

  /** Onboarding `clientId`: within the caller's tenants (a scoped key names its own client). */
  requireOnboard(p: Principal, clientId: string): void {
    if (this.can(p, 'onboard', { kind: 'client', clientId })) return;
    if (p.clientScope && p.clientScope !== clientId) throw new ForbiddenError(`API key is scoped to client ${p.clientScope}`);
    throw new ForbiddenError(`Client ${clientId} is not granted to ${p.username}`);
  }

  /**
   * Onboarding never binds a client to a connection owned by another client, whoever calls;
   * a confined caller may not claim an unowned platform connection either (409, nothing written).
   */
  requireConnectionFor(p: Principal, clientId: string, connectionId: string): void {
    const c = this.#owners.connection(connectionId);
    if (!c || c.shared || c.owner === clientId) return;
    if (c.owner !== null || !isUnconfined(p)) throw new ConflictError(connectionTaken(connectionId));
  }

  /**
   * An object the caller creates must belong to one of its tenants; an object of no client is
   * for unconfined callers only. `owner` is looked up only for a confined caller (403 `refusal`).
   */
  requireOwnedWithin(p: Principal, owner: () => string | null, refusal: string): void {
    if (isUnconfined(p)) return;
    if (!this.#within(p, owner())) throw new ForbiddenError(refusal);
  }

  /**
   * The clients whose objects the caller sees ('all' for an unconfined admin): a confined
   * caller's held (suspended, offboarded) clients are left out of data listings.
   */
  tenants(p: Principal): 'all' | readonly string[] {
    const t = tenantsOf(p);
    return t === 'all' ? t : t.filter((c) => this.#owners.hold(c) === undefined);
  }

  /** The clients whose registry entries the caller sees: held ones included (registry reads still show them). */
  registryTenants(p: Principal): 'all' | readonly string[] {
    return tenantsOf(p);
  }
}
