import type { Ownership } from '../contract.ts';
import type { Store } from '../store/db.ts';
import { vdmOwner } from './client/resources.ts';
import { connectionManifestOwner, connectionOwnership } from './connection/store.ts';
import { dashboardManifestOwner, dashboardOwner } from './dashboard/store.ts';
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
  };
}
