import { connectionManifestKey, secretSharedBeyond } from '../kinds/connection/store.ts';
import { dashboardsOnConnection } from '../kinds/dashboard/store.ts';
import type { Principal } from '../auth/principal.ts';
import { readConnectionSummary } from '../kinds/connection/registry.ts';
import { ApplyFailedError, ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import type { ConnectionSpec } from '../kinds/connection/applier.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { SecretStore } from '../secrets/store.ts';
import type { Store } from '../store/db.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import { secretTarget } from '../secrets/target.ts';
import type { Manifest } from '../types.ts';
import { definingFile, withoutActor, type DefiningFilePorts } from './manifest-file.ts';
import type { ConnectionInput } from './save-connection.ts';
import { validationFailed } from './save-connection.ts';

/** What a connection edit or delete needs of the controller. */
export interface EditConnectionPorts extends DefiningFilePorts {
  readonly db: Store;
  readonly locks: KeyedMutex;
  readonly secrets: SecretStore;
  readonly submitter: Pick<ManifestSubmitter, 'submit' | 'withdraw'>;
}

/** What uses a connection: clients, their VDMs, standalone dashboards and pipelines. */
export interface ConnectionUsers {
  clients: string[];
  vdms: { vdmId: string; name: string; clientId: string }[];
  dashboards: { facadeId: string; name: string; clientId: string | null }[];
  pipelines: { pipelineId: string; name: string }[];
}

/** A delete refused because something still uses the connection (409, naming the users). */
export class ConnectionInUseError extends ConflictError {
  readonly usedBy: ConnectionUsers;
  constructor(connectionId: string, usedBy: ConnectionUsers) {
    const names = [
      ...usedBy.clients.map((c) => `client ${c}`),
      ...usedBy.vdms.map((v) => `VDM ${v.name} (${v.clientId})`),
      ...usedBy.dashboards.map((d) => `dashboard ${d.name}`),
      ...usedBy.pipelines.map((p) => `pipeline ${p.name}`),
    ];
    super(`Connection ${connectionId} is in use by ${names.join(', ')}`);
    this.usedBy = usedBy;
  }
}

interface Defined {
  key: string;
  path: string;
  manifest: Manifest<ConnectionSpec>;
}

/**
 * The console's edit and delete of a connection (docs/console.md, "Connections"). A connection is
 * a manifest: an edit rewrites the manifest that defines it, a delete removes that manifest, both
 * through the one write path; a connection a Client's onboarding or a ClientSet defines is changed
 * there instead (409 saying where). A typed password replaces the stored secret; no password keeps
 * it (and its target: moving a stored secret to another host is refused). A delete is refused
 * while anything uses the connection.
 */
export class EditConnection {
  readonly #rt: EditConnectionPorts;

  constructor(opts: { runtime: EditConnectionPorts }) {
    this.#rt = opts.runtime;
  }

  /** Everything that still uses `connectionId`. */
  users(connectionId: string): ConnectionUsers {
    const summary = readConnectionSummary(this.#rt.db, connectionId);
    if (!summary) throw new NotFoundError(`Connection ${connectionId} not found`);
    const dashboards = dashboardsOnConnection(this.#rt.db, connectionId);
    return { clients: summary.usedBy.clients, vdms: summary.usedBy.vdms, dashboards, pipelines: summary.usedBy.pipelines };
  }

  /** The Connection manifest file that defines `connectionId`, or a 409 saying what defines it. */
  #defined(connectionId: string): Defined {
    const key = connectionManifestKey(this.#rt.db, connectionId);
    if (key === undefined) throw new NotFoundError(`Connection ${connectionId} not found`);
    if (!key?.startsWith('Connection/')) throw new ConflictError(`Connection ${connectionId} is defined by ${key ?? 'no manifest'}: change it there`);
    const { path, manifest } = definingFile(this.#rt, key, `Connection ${connectionId}`);
    return { key, path, manifest: manifest as Manifest<ConnectionSpec> };
  }

  /** The spec of the manifest that defines `connectionId` (a form's starting values; the route merges a body over it). */
  currentSpec(connectionId: string): ConnectionSpec {
    return this.#defined(connectionId).manifest.spec;
  }

  /** Rewrites the connection's manifest with `input` over its current spec; answers the connection as listed. */
  async update(connectionId: string, input: ConnectionInput, caller: Principal): Promise<void> {
    const rt = this.#rt;
    const { key, path, manifest: current } = this.#defined(connectionId);
    await rt.locks.run(key, async () => {
      const { password, secretRef, spec } = input;
      if (spec.connectionId && spec.connectionId !== connectionId) throw validationFailed([{ path: 'connectionId', message: 'connectionId cannot change' }]);
      const next: ConnectionSpec = { ...current.spec, ...spec };
      if (current.spec.connectionId) next.connectionId = current.spec.connectionId;
      else delete next.connectionId;
      const target = secretTarget({ ...next, vendor: next.vendor ?? 'SNOWFLAKE' });
      const keptRef = secretRef ?? (next.passwordEnv && !current.spec.secretRef ? undefined : current.spec.secretRef);
      if (keptRef && !password) {
        if (!rt.secrets.has(keptRef)) throw validationFailed([{ path: 'secretRef', message: `secretRef ${keptRef} does not exist` }]);
        const refused = rt.secrets.refusal(keptRef, target);
        if (refused) throw validationFailed([{ path: 'password', message: refused }]);
      }
      const checked = rt.schemas.validate<ConnectionSpec>('connection', structuredClone({ ...next, ...(keptRef ? { secretRef: keptRef } : {}) }));
      if (!checked.ok) throw validationFailed(checked.problems);
      const stored = password ? rt.secrets.put(password, { target, label: key, createdBy: caller.userId, ...(keptRef ? { secretId: keptRef.slice('secret:'.length) } : {}) }) : undefined;
      const ref = stored?.secretRef ?? keptRef;
      if (ref) {
        next.secretRef = ref;
        delete next.passwordEnv;
      }
      const manifest: Manifest = { ...withoutActor(current as unknown as Manifest), spec: next as unknown as Record<string, unknown> };
      const result = await rt.submitter.submit({ relPath: path, manifest, caller, message: `update connection ${connectionId}`, withdrawOnFailure: false });
      if (result.phase !== 'Synced') {
        // A refused edit leaves the connection as it was: its previous manifest goes back.
        await rt.submitter.submit({ relPath: path, manifest: current as unknown as Manifest, caller, message: `restore connection ${connectionId}: the edit did not apply`, withdrawOnFailure: false });
        const text = result.message || `${key} is ${result.phase}`;
        if (result.phase === 'Invalid') throw new ValidationError([], text);
        throw new ApplyFailedError(result, text);
      }
    });
  }

  /** Removes the connection's manifest (and its stored secret when no other connection shares it); refused while anything uses it. */
  async remove(connectionId: string, caller: Principal): Promise<void> {
    const rt = this.#rt;
    const users = this.users(connectionId);
    if (users.clients.length + users.vdms.length + users.dashboards.length + users.pipelines.length > 0) throw new ConnectionInUseError(connectionId, users);
    const { key, path, manifest } = this.#defined(connectionId);
    await rt.locks.run(key, async () => {
      await rt.submitter.withdraw(path, caller, `delete connection ${connectionId}`);
      if (connectionManifestKey(rt.db, connectionId) !== undefined) throw new ConflictError(`Connection ${connectionId} could not be removed: ${rt.reconciler.status.get(key)?.message ?? 'see its status'}`);
      const ref = manifest.spec.secretRef;
      if (ref && !secretSharedBeyond(rt.db, ref, connectionId) && rt.secrets.has(ref)) rt.secrets.remove(ref);
    });
  }
}
