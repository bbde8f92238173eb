import type { Database } from 'better-sqlite3';
import { postgresEndpoint } from '../connections/test-connection.ts';
import type { SecretStore } from '../secrets/store.ts';
import type { ConnectionResolver, ResolvedConnection } from './types.ts';

interface ConnectionRow {
  connection_id: string;
  vendor: string;
  account_url: string | null;
  warehouse: string | null;
  database_name: string | null;
  schema_name: string | null;
  username: string | null;
  password_env: string | null;
  secret_ref: string | null;
}

export interface StoreConnectionResolverOptions {
  db: Database;
  /** The connections the run's pipeline references: a run reaches no other. */
  allowed: readonly string[];
  env: NodeJS.ProcessEnv;
  secrets: Pick<SecretStore, 'reveal'>;
}

/**
 * Connections of the store with their credential resolved at run time — from the environment
 * variable `passwordEnv` names, or decrypted from `secretRef` — never from the pipeline. A run
 * resolves only the connections its own pipeline references (its tenant's).
 */
export class StoreConnectionResolver implements ConnectionResolver {
  readonly #opts: StoreConnectionResolverOptions;
  constructor(opts: StoreConnectionResolverOptions) {
    this.#opts = opts;
  }

  resolve(connectionId: string): ResolvedConnection {
    const { db, allowed, env, secrets } = this.#opts;
    const row = allowed.includes(connectionId)
      ? (db.prepare('SELECT * FROM connections WHERE connection_id = ?').get(connectionId) as ConnectionRow | undefined)
      : undefined;
    if (!row) throw new Error(`connection ${connectionId} not found`);
    let password: string | undefined;
    if (row.password_env) {
      password = env[row.password_env];
      if (password === undefined) throw new Error(`connection ${connectionId}: environment variable ${row.password_env} is not set`);
    } else if (row.secret_ref) {
      password = secrets.reveal(row.secret_ref);
    }
    const vendor = row.vendor === 'POSTGRESQL' ? 'POSTGRESQL' : 'SNOWFLAKE';
    const endpoint = vendor === 'POSTGRESQL' ? postgresEndpoint({ vendor, accountUrl: row.account_url ?? undefined }) : undefined;
    return {
      connectionId,
      vendor,
      ...(endpoint ? { host: endpoint.host, port: endpoint.port } : {}),
      ...(row.database_name ? { database: row.database_name } : {}),
      ...(row.schema_name ? { schema: row.schema_name } : {}),
      ...(row.username ? { username: row.username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(vendor === 'SNOWFLAKE' && row.account_url ? { accountUrl: row.account_url } : {}),
      ...(row.warehouse ? { warehouse: row.warehouse } : {}),
    };
  }
}
