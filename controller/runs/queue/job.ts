import { deriveKey, keyId, open, type Sealed } from '../../secrets/cipher.ts';
import { parseSecretRef, type SecretStore } from '../../secrets/store.ts';
import type { Store } from '../../store/db.ts';
import type { NetworkEgressPolicyOptions } from '../engine/egress.ts';
import { StoreConnectionResolver } from '../engine/connections.ts';
import type { ConnectionResolver, EngineInput, ResolvedConnection } from '../types.ts';

/** The graphile-worker task name of a pipeline run. */
export const RUN_TASK = 'bi_pipeline_run';

/** A stored secret as it travels in a job: still encrypted (AES-256-GCM, the secret's ID as AAD). */
export interface SealedCredential extends Sealed {
  secretId: string;
  /** The fingerprint of the BI_SECRET_KEY it was sealed with (to tell a wrong key from an altered value). */
  keyId: string;
}

/** A connection of a job: where it points, and how the worker gets its password — or why it cannot be used. */
export type JobConnection =
  | { connection: Omit<ResolvedConnection, 'password'>; secret?: SealedCredential; passwordEnv?: string }
  | { error: string };

/**
 * What the queue carries for one run (graphile-worker's job payload): the pipeline's resolved
 * spec, its connections without any plaintext password, and the controller's egress rules.
 */
export interface RunJob {
  runId: string;
  pipelineId: string;
  spec: Pick<EngineInput, 'source' | 'destination' | 'steps'>;
  connections: Record<string, JobConnection>;
  egress: Pick<NetworkEgressPolicyOptions, 'listen' | 'allowHosts'>;
}

/** Every connection ID the pipeline names (source, destination, each step's config). */
export function connectionIds(spec: RunJob['spec']): string[] {
  const ids = new Set([spec.source.connectionId, spec.destination.connectionId]);
  for (const s of spec.steps) if (typeof s.config.connectionId === 'string') ids.add(s.config.connectionId);
  return [...ids].filter((id): id is string => Boolean(id));
}

const SECRET_MARK = '\u0000bi-secret:';
const ENV_MARK = '\u0000bi-env:';

/**
 * The job's connections, resolved on the controller by the same StoreConnectionResolver an
 * in-process run uses (its tenant and target checks), except that nothing is decrypted or read
 * from the controller's environment: a stored secret is put in the job sealed as stored, a
 * `passwordEnv` by its name, to be read on the worker.
 */
export function jobConnections(opts: { db: Store; secrets: SecretStore; allowed: readonly string[]; ids: readonly string[] }): Record<string, JobConnection> {
  const { db } = opts;
  // reveal() and the environment answer markers; the resolver's checks (tenant, target) run as for a local run.
  const markers = {
    refusal: (ref: string, target: Parameters<SecretStore['refusal']>[1]) => opts.secrets.refusal(ref, target),
    reveal: (ref: string) => `${SECRET_MARK}${parseSecretRef(ref) ?? ref}`,
  };
  const env = new Proxy({} as NodeJS.ProcessEnv, { get: (_t, name) => (typeof name === 'string' ? `${ENV_MARK}${name}` : undefined) });
  const resolver = new StoreConnectionResolver({ db, secrets: markers as unknown as SecretStore, env, mayUse: (id) => opts.allowed.includes(id) });
  const out: Record<string, JobConnection> = {};
  for (const id of opts.ids) {
    try {
      const { password, ...connection } = resolver.resolve(id);
      if (password?.startsWith(SECRET_MARK)) {
        const secretId = password.slice(SECRET_MARK.length);
        const row = db.prepare('SELECT iv, ciphertext, tag, key_id FROM secrets WHERE secret_id = ?').get(secretId) as
          | { iv: string; ciphertext: string; tag: string; key_id: string }
          | undefined;
        if (!row) throw new Error(`Connection ${id}: secretRef secret:${secretId} does not exist`);
        out[id] = { connection, secret: { secretId, iv: row.iv, ciphertext: row.ciphertext, tag: row.tag, keyId: row.key_id } };
      } else if (password?.startsWith(ENV_MARK)) {
        out[id] = { connection, passwordEnv: password.slice(ENV_MARK.length) };
      } else {
        out[id] = { connection };
      }
    } catch (err) {
      out[id] = { error: (err as Error).message };
    }
  }
  return out;
}

/**
 * A job's connections on the worker: a sealed secret decrypted with the worker's BI_SECRET_KEY, a
 * `passwordEnv` read from the worker's environment. A missing credential throws naming what is
 * missing (the engine fails the run with it; the worker stays up).
 */
export class JobConnectionResolver implements ConnectionResolver {
  readonly #job: RunJob;
  readonly #opts: { secretKey?: string; env: NodeJS.ProcessEnv; worker: string };
  static #keys = new Map<string, Buffer>();

  constructor(job: RunJob, opts: { secretKey?: string; env: NodeJS.ProcessEnv; worker: string }) {
    this.#job = job;
    this.#opts = opts;
  }

  resolve(connectionId: string): ResolvedConnection {
    const c = this.#job.connections[connectionId];
    if (!c) throw new Error(`Connection ${connectionId} not found`);
    if ('error' in c) throw new Error(c.error);
    const { worker } = this.#opts;
    if (c.secret) {
      const secretKey = this.#opts.secretKey;
      if (!secretKey) {
        throw new Error(`Connection ${connectionId}: BI_SECRET_KEY is not set on worker ${worker}; the connection's password is a stored secret (secret:${c.secret.secretId})`);
      }
      let key = JobConnectionResolver.#keys.get(secretKey);
      if (!key) {
        key = deriveKey(secretKey);
        JobConnectionResolver.#keys.set(secretKey, key);
      }
      if (keyId(key) !== c.secret.keyId) throw new Error(`Connection ${connectionId}: worker ${worker}'s BI_SECRET_KEY is not the key secret:${c.secret.secretId} was stored with`);
      try {
        return { ...c.connection, password: open(key, c.secret, c.secret.secretId) };
      } catch {
        throw new Error(`Connection ${connectionId}: secret:${c.secret.secretId} could not be decrypted on worker ${worker}`);
      }
    }
    if (c.passwordEnv) {
      const password = this.#opts.env[c.passwordEnv];
      if (password === undefined) throw new Error(`Connection ${connectionId}: environment variable ${c.passwordEnv} (passwordEnv) is not set on worker ${worker}`);
      return { ...c.connection, password };
    }
    return { ...c.connection };
  }
}
