import type { Ownership } from '../contract.ts';
import type { Store } from '../store/db.ts';
import { clientHold, clientIdOfManifest } from './client/registry.ts';
import { vdmOwner } from './client/resources.ts';
import { connectionManifestOwner, connectionOwnership } from './connection/store.ts';
import { dashboardClientOfManifest, dashboardManifestOwner, dashboardOwner } from './dashboard/store.ts';
import { pipelineManifestOwner, pipelineOwner } from './pipeline/store.ts';

/** Each kind's answer to "which client owns the objects of this manifest" (kinds not listed own none). */
const MANIFEST_OWNERS: Readonly<Record<string, (db: Store, key: string) => string | null>> = {
  Client: (_db, key) => key.slice(key.indexOf('/') + 1),
  Connection: connectionManifestOwner,
  Dashboard: dashboardManifestOwner,
  Pipeline: pipelineManifestOwner,
};

/** The ownership facet of every kind, read from each kind's own tables (the Authorizer asks it). */
export function kindOwnership(db: Store): Ownership {
  return {
    connection: (id) => connectionOwnership(db, id),
    vdm: (id) => vdmOwner(db, id),
    dashboard: (id) => dashboardOwner(db, id),
    pipeline: (id) => pipelineOwner(db, id),
    manifest: (key) => MANIFEST_OWNERS[key.slice(0, key.indexOf('/'))]?.(db, key) ?? null,
    hold: (clientId) => clientHold(db, clientId),
  };
}

/**
 * The client a notification about a manifest names (a notifier's `clients` filter matches every
 * object a client owns): the client a Client manifest onboarded (its name until stored), a
 * dashboard's owner or, for one of a client's packages, that client; a pipeline's or connection's owner.
 */
export function notificationClient(db: Store, kind: string, name: string): string | undefined {
  const key = `${kind}/${name}`;
  switch (kind) {
    case 'Client':
      return clientIdOfManifest(db, key) ?? name;
    case 'Dashboard':
      return dashboardClientOfManifest(db, key) ?? undefined;
    case 'Pipeline':
      return pipelineManifestOwner(db, key) ?? undefined;
    case 'Connection':
      return connectionManifestOwner(db, key) ?? undefined;
    default:
      return undefined;
  }
}
