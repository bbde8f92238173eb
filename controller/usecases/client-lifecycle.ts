import { ApplyFailedError, ConflictError, NotFoundError } from '../errors.ts';
import { clientPackage } from '../kinds/client/export.ts';
import { readClient, type ClientRow } from '../kinds/client/registry.ts';
import type { ClientStatus } from '../kinds/client/types.ts';
import { manifestKey, parseManifest } from '../manifest/loader.ts';
import type { Runtime } from '../runtime.ts';
import type { Manifest } from '../types.ts';
import type { Principal } from '../auth/principal.ts';
import { clientManifestPath } from './onboard-client.ts';
import { clientManifestRow } from './offboard-client.ts';

/** What a lifecycle shortcut answers: the client's registry status after it. */
export interface LifecycleOutcome {
  clientId: string;
  status: ClientStatus;
}

/**
 * The lifecycle shortcuts of the API and `bictl clients …` (docs/contract/design.md, "Tenant lifecycle"): each
 * writes the client's manifest through the one write path, so git (or the folder) stays the
 * desired state. Suspend/resume set `spec.suspended` in the manifest; restore writes the
 * offboarded client's manifest back (its retained resources keep their IDs). Offboarding is
 * `OffboardClient` (the manifest withdrawn), purging `ClientPurge`.
 */
export class ClientLifecycle {
  readonly #rt: Runtime;

  constructor(opts: { runtime: Runtime }) {
    this.#rt = opts.runtime;
  }

  suspend(clientId: string, caller: Principal): Promise<LifecycleOutcome> {
    return this.#setSuspended(clientId, true, caller);
  }

  resume(clientId: string, caller: Principal): Promise<LifecycleOutcome> {
    return this.#setSuspended(clientId, false, caller);
  }

  /** OFFBOARDED → its manifest written back from the retained resources: ACTIVE again with the same IDs. */
  restore(clientId: string, caller: Principal): Promise<LifecycleOutcome> {
    const rt = this.#rt;
    return rt.locks.run(manifestKey('Client', clientId), async () => {
      const row = this.#row(clientId);
      if (row.status !== 'OFFBOARDED') throw new ConflictError(`Client ${clientId} is ${row.status}: only an OFFBOARDED client can be restored`);
      if (purgeStarted(rt, clientId)) throw new ConflictError(`Client ${clientId} is being purged`);
      const spec = clientPackage(rt.db, clientId, ['OFFBOARDED']);
      const name = row.manifest_key?.startsWith('Client/') ? row.manifest_key.slice('Client/'.length) : clientId;
      const relPath = clientManifestRow(rt, clientId)?.path ?? clientManifestPath(clientId);
      const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Client', metadata: { name }, spec: spec as unknown as Record<string, unknown> };
      const result = await rt.submitter.submit({ relPath, manifest, caller, message: `restore client ${clientId}` });
      if (result.phase !== 'Synced') throw new ApplyFailedError(result);
      return { clientId, status: this.#row(clientId).status };
    });
  }

  #setSuspended(clientId: string, suspended: boolean, caller: Principal): Promise<LifecycleOutcome> {
    const rt = this.#rt;
    return rt.locks.run(manifestKey('Client', clientId), async () => {
      const row = this.#row(clientId);
      const wanted: ClientStatus = suspended ? 'SUSPENDED' : 'ACTIVE';
      if (row.status === wanted) return { clientId, status: row.status };
      if (row.status !== 'ACTIVE' && row.status !== 'SUSPENDED') {
        throw new ConflictError(`Client ${clientId} is ${row.status}: only an ACTIVE or SUSPENDED client can be ${suspended ? 'suspended' : 'resumed'}`);
      }
      const status = clientManifestRow(rt, clientId);
      const file = status?.path ? rt.source.read(status.path) : null;
      if (!status?.path || !file || 'unreadable' in file) throw new ConflictError(`Client ${clientId} has no manifest to change`);
      const parsed = parseManifest(status.path, file.bytes, rt.schemas);
      if (!parsed.ok || parsed.manifest.kind !== 'Client') throw new ConflictError(`Client ${clientId}: its manifest ${status.path} is not valid; fix it first`);
      const manifest = parsed.manifest;
      const spec = { ...manifest.spec };
      if (suspended) spec.suspended = true;
      else delete spec.suspended;
      const result = await rt.submitter.submit({
        relPath: status.path,
        manifest: { ...manifest, spec },
        caller,
        message: `${suspended ? 'suspend' : 'resume'} client ${clientId}`,
        // A failed suspend must not withdraw the manifest: that would offboard the client.
        withdrawOnFailure: false,
      });
      if (result.phase !== 'Synced') throw new ApplyFailedError(result);
      return { clientId, status: this.#row(clientId).status };
    });
  }

  #row(clientId: string): ClientRow {
    const row = readClient(this.#rt.db, clientId);
    if (!row) throw new NotFoundError(`Client ${clientId} not found`);
    return row;
  }
}

/** Whether a purge of the client has been recorded (a started purge is finished, never undone). */
export function purgeStarted(rt: Runtime, clientId: string): boolean {
  return rt.db.statements.prepare('SELECT 1 FROM client_purges WHERE client_id = ?').get(clientId) !== undefined;
}
