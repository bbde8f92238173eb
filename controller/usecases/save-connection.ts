import { activeClientOn } from '../kinds/client/registry.ts';
import { settingsConnectionsOf } from '../kinds/connection/store.ts';
import { ApplyFailedError, formatProblem, ValidationError } from '../errors.ts';
import type { ConnectionSpec } from '../kinds/connection/applier.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { Store } from '../store/db.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import { secretTarget } from '../secrets/target.ts';
import type { SecretStore } from '../secrets/store.ts';
import { IdAllocator } from '../store/ids.ts';
import type { Clock, Manifest, ManifestSource, ManifestWriter, Problem } from '../types.ts';
import { safeManifestPath } from '../writers/paths.ts';
import type { Principal } from '../auth/principal.ts';

/** The connection fields of a form, with the typed password kept apart from the spec. */
export interface ConnectionInput {
  spec: Partial<ConnectionSpec>;
  password?: string;
  secretRef?: string;
}

export interface SavedConnection {
  created: boolean;
  connectionId: string;
  secretRef?: string;
  path: string;
  phase: 'Synced';
}

/** What saving a connection needs of the controller. */
export interface SaveConnectionPorts {
  readonly db: Store;
  readonly clock: Clock;
  readonly schemas: SchemaRegistry;
  readonly locks: KeyedMutex;
  readonly source: Pick<ManifestSource, 'root'>;
  readonly writer: Pick<ManifestWriter, 'exists'>;
  readonly submitter: Pick<ManifestSubmitter, 'submit'>;
}

/** A 400 in the onboarding endpoint's style: `Validation failed: a; b`. */
export function validationFailed(problems: Problem[]): ValidationError {
  return new ValidationError(problems, `Validation failed: ${problems.map(formatProblem).join('; ')}`);
}

/**
 * The settings UI's data source: a Connection manifest (`connections/<connectionId>.yaml`)
 * through the one submit path; a typed password goes to the secret store and the manifest
 * gets its `secretRef`. A new connection that does not apply is withdrawn with its secret.
 */
export class SaveConnection {
  readonly #rt: SaveConnectionPorts;
  readonly #secrets: SecretStore;
  readonly #ids: IdAllocator;

  constructor(opts: { runtime: SaveConnectionPorts; secrets: SecretStore }) {
    this.#rt = opts.runtime;
    this.#secrets = opts.secrets;
    this.#ids = new IdAllocator({ db: opts.runtime.db, clock: opts.runtime.clock });
  }

  /**
   * A connection the settings UI wrote earlier for `owner` that no ACTIVE client uses (a Create
   * that failed, or whose answer was lost): updated in place, so a retry leaves no second one.
   */
  #reusable(owner: string | undefined): string | undefined {
    if (!owner) return undefined;
    const db = this.#rt.db;
    return settingsConnectionsOf(db, owner).find((id) => !activeClientOn(db, id));
  }

  run(input: ConnectionInput, caller: Principal): Promise<SavedConnection> {
    const owner = input.spec.connectionId ? undefined : input.spec.owner;
    // Which connection an owner's Create reuses is decided and written under one lock per owner:
    // a burst of Creates for one client (a double click, a retry racing the lost answer) leaves one.
    return owner ? this.#rt.locks.run(`ConnectionOwner/${owner.toUpperCase()}`, () => this.#save(input, caller)) : this.#save(input, caller);
  }

  async #save(input: ConnectionInput, caller: Principal): Promise<SavedConnection> {
    const rt = this.#rt;
    const { spec, password, secretRef } = input;
    if (secretRef && !this.#secrets.has(secretRef)) throw validationFailed([{ path: 'secretRef', message: `secretRef ${secretRef} does not exist` }]);
    // A stored password is only ever sent to the target it was stored with.
    const target = secretTarget({ ...spec, vendor: spec.vendor ?? 'SNOWFLAKE' });
    const rerouted = secretRef && !password ? this.#secrets.refusal(secretRef, target) : undefined;
    if (rerouted) throw validationFailed([{ path: 'secretRef', message: rerouted }]);
    const connectionId = spec.connectionId ?? this.#reusable(spec.owner) ?? rt.db.transaction(() => this.#ids.next('connection'))();
    const relPath = `connections/${connectionId}.yaml`;
    safeManifestPath(rt.source.root, relPath);
    const key = `Connection/${connectionId}`;
    return rt.locks.run(key, async () => {
      const existed = await rt.writer.exists(relPath);
      const manifestSpec = { ...(spec as ConnectionSpec), connectionId, ...(secretRef ? { secretRef } : {}) };
      const checked = rt.schemas.validate<ConnectionSpec>('connection', structuredClone(manifestSpec));
      if (!checked.ok) throw validationFailed(checked.problems);
      const stored = password
        ? this.#secrets.put(password, { target, label: key, createdBy: caller.userId, ...(secretRef ? { secretId: secretRef.slice('secret:'.length) } : {}) })
        : undefined;
      const ref = stored?.secretRef ?? secretRef;
      const manifest: Manifest<ConnectionSpec> = {
        apiVersion: 'bi.controller/v1',
        kind: 'Connection',
        metadata: { name: connectionId, labels: { 'bi.controller/created-by': 'settings-ui' } },
        spec: { ...manifestSpec, ...(ref ? { secretRef: ref } : {}) },
      };
      const message = `${existed ? 'update' : 'add'} connection ${connectionId}`;
      const result = await rt.submitter.submit({ relPath, manifest: manifest as unknown as Manifest, caller, message, withdrawOnFailure: !existed });
      if (result.phase !== 'Synced') {
        if (!existed && stored && !secretRef) this.#secrets.remove(stored.secretRef);
        const text = result.message || `${key} is ${result.phase}`;
        if (result.phase === 'Invalid') throw new ValidationError([], text);
        throw new ApplyFailedError(result, text);
      }
      return { created: !existed, connectionId, ...(ref ? { secretRef: ref } : {}), path: relPath, phase: 'Synced' };
    });
  }
}
