import { secretTarget } from '../../secrets/target.ts';
import pg from 'pg';
import { postgresEndpoint } from '../../lib/endpoints.ts';
import { NotFoundError } from '../../errors.ts';
import { readConnectionRow } from '../../kinds/connection/store.ts';
import type { SecretStore } from '../../secrets/store.ts';
import type { Store } from '../../store/db.ts';
import type { ConnectionResolver, EgressPolicy, ResolvedConnection } from '../types.ts';
import { passwordEnvRefusal, type StoredReachConnection } from '../reach.ts';

export interface StoreConnectionResolverOptions {
  db: Store;
  secrets: SecretStore;
  /** Where `passwordEnv` names are looked up (the process environment by default). */
  env?: NodeJS.ProcessEnv;
  /** The run's tenant check: false → the connection is answered as unknown. All allowed when absent. */
  mayUse?: (connectionId: string) => boolean;
}


/** What the import check needs of a stored connection to decide its reach (runs/reach.ts); never the credential. */
export function storedReachConnection(db: Store, connectionId: string): StoredReachConnection | undefined {
  const row = readConnectionRow(db, connectionId);
  if (!row) return undefined;
  return {
    connectionId: row.connection_id,
    vendor: row.vendor === 'POSTGRESQL' ? 'POSTGRESQL' : 'SNOWFLAKE',
    ...(row.account_url ? { accountUrl: row.account_url } : {}),
    ...(row.database_name ? { database: row.database_name } : {}),
    ...(row.warehouse ? { warehouse: row.warehouse } : {}),
    shared: row.shared === 1,
    ...(row.tenant_schema ? { tenantSchema: row.tenant_schema } : {}),
    hasCredential: Boolean(row.password_env || row.secret_ref),
  };
}

/**
 * Connections of the store with their credential: `passwordEnv` read from the environment, or the
 * `secretRef` decrypted by the SecretStore. A PostgreSQL connection's host and port come from its
 * stored account URL (`postgresql://host:port`, see connectionColumns()).
 */
export class StoreConnectionResolver implements ConnectionResolver {
  readonly #opts: StoreConnectionResolverOptions;

  constructor(opts: StoreConnectionResolverOptions) {
    this.#opts = opts;
  }

  resolve(connectionId: string): ResolvedConnection {
    const row = readConnectionRow(this.#opts.db, connectionId);
    if (!row || (this.#opts.mayUse && !this.#opts.mayUse(connectionId))) throw new NotFoundError(`Connection ${connectionId} not found`);
    const vendor = row.vendor === 'POSTGRESQL' ? 'POSTGRESQL' : 'SNOWFLAKE';
    let password: string | undefined;
    if (row.secret_ref) {
      // A stored secret goes only to the host, port, database and user it was stored with.
      const target = secretTarget({ vendor, accountUrl: row.account_url ?? undefined, database: row.database_name ?? undefined, username: row.username ?? undefined });
      const refused = this.#opts.secrets.refusal(row.secret_ref, target);
      if (refused) throw new Error(`Connection ${connectionId}: ${refused}`);
      password = this.#opts.secrets.reveal(row.secret_ref);
    }
    else if (row.password_env) {
      // Stored before the rule, or written around the schema: the controller's own settings stay unread.
      const refused = passwordEnvRefusal(row.password_env);
      if (refused) throw new Error(`Connection ${connectionId}: ${refused}`);
      password = (this.#opts.env ?? process.env)[row.password_env];
      if (password === undefined) throw new Error(`Connection ${connectionId}: environment variable ${row.password_env} (passwordEnv) is not set`);
    }
    const endpoint = vendor === 'POSTGRESQL' && row.account_url ? postgresEndpoint({ vendor, accountUrl: row.account_url }) : undefined;
    return {
      connectionId: row.connection_id,
      vendor,
      ...(endpoint ? { host: endpoint.host, port: endpoint.port } : {}),
      ...(row.account_url ? { accountUrl: row.account_url } : {}),
      ...(row.database_name ? { database: row.database_name } : {}),
      ...(row.schema_name ? { schema: row.schema_name } : {}),
      ...(row.username ? { username: row.username } : {}),
      ...(password !== undefined ? { password } : {}),
      ...(row.warehouse ? { warehouse: row.warehouse } : {}),
      ...(row.shared === 1 ? { shared: true } : {}),
      ...(row.tenant_schema ? { tenantSchema: row.tenant_schema } : {}),
    };
  }
}

/** The decimal number written by the digits `s[from..to)`, or -1 when one of them is not a digit. */
function digitsAt(s: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** `YYYY-MM-DD` at `at` (years 100–9999: Date.UTC reads 0–99 as 19xx) as UTC milliseconds, or NaN. */
export function simpleDateMs(v: string, at = 0): number {
  if (v.length < at + 10 || v.charCodeAt(at + 4) !== 45 || v.charCodeAt(at + 7) !== 45) return Number.NaN;
  const y = digitsAt(v, at, at + 4);
  const m = digitsAt(v, at + 5, at + 7);
  const d = digitsAt(v, at + 8, at + 10);
  return y >= 100 && m >= 0 && d >= 0 ? Date.UTC(y, m - 1, d) : Number.NaN;
}

/** `YYYY-MM-DD HH:MM:SS[.ffffff]` read as UTC (milliseconds kept, finer digits dropped), or NaN. */
function simpleTimestampMs(v: string): number {
  if (v.length < 19 || v.charCodeAt(10) !== 32 || v.charCodeAt(13) !== 58 || v.charCodeAt(16) !== 58) return Number.NaN;
  const day = simpleDateMs(v);
  const h = digitsAt(v, 11, 13);
  const mi = digitsAt(v, 14, 16);
  const sec = digitsAt(v, 17, 19);
  if (Number.isNaN(day) || h < 0 || mi < 0 || sec < 0) return Number.NaN;
  let ms = 0;
  if (v.length > 19) {
    const digits = v.length - 20;
    if (v.charCodeAt(19) !== 46 || digits < 1 || digits > 6) return Number.NaN;
    const fraction = digitsAt(v, 20, v.length);
    if (fraction < 0) return Number.NaN;
    ms = Math.floor(fraction / 10 ** (digits - 3));
  }
  return day + ((h * 60 + mi) * 60 + sec) * 1000 + ms;
}

/** `infinity`, BC dates and other rare forms: a Date when JavaScript can read it, else the text. */
const pgDate = (iso: string, text: string): Date | string => {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? text : d;
};

/** int8 as a number when exact, else BigInt; numeric as a number up to 15 significant digits (exact), else its text. */
const PARSERS: Record<number, (v: string) => unknown> = {
  20: (v) => {
    const n = Number(v);
    return Number.isSafeInteger(n) ? n : BigInt(v);
  },
  1700: (v) => {
    const n = Number(v);
    // 15 significant digits or fewer survive the trip through a double exactly
    return Number.isFinite(n) && (v.length <= 16 || v.replace(/^[-+]?0*|\.|e.*$/gi, '').replace(/0+$/, '').length <= 15) ? n : v;
  },
  // date → UTC midnight, timestamp without time zone → read as UTC (never the controller's local zone)
  1082: (v) => {
    const ms = v.length === 10 ? simpleDateMs(v) : Number.NaN;
    return Number.isNaN(ms) ? pgDate(`${v}T00:00:00Z`, v) : new Date(ms);
  },
  1114: (v) => {
    const ms = simpleTimestampMs(v);
    return Number.isNaN(ms) ? pgDate(`${v.replace(' ', 'T')}Z`, v) : new Date(ms);
  },
};

/**
 * How the COPY decoder reads a column of that type: `text` is the value itself (text, varchar, char,
 * types pg leaves as text), `int` a 16/32-bit integer, `date` a date; `other` goes through textParser.
 */
export function textForm(oid: number): 'text' | 'int' | 'date' | 'other' {
  if (oid === 21 || oid === 23) return 'int';
  if (oid === 1082) return 'date';
  return PARSERS[oid] === undefined && pg.types.getTypeParser(oid, 'text') === pg.types.getTypeParser(25, 'text') ? 'text' : 'other';
}

/** The text-format parser of a PostgreSQL type (query results and COPY text share the representation). */
export function textParser(oid: number): (v: string) => unknown {
  return PARSERS[oid] ?? (pg.types.getTypeParser(oid, 'text') as (v: string) => unknown);
}

const types = {
  getTypeParser: (oid: number, format?: 'text' | 'binary') => {
    const own = PARSERS[oid];
    return own !== undefined && format !== 'binary' ? own : pg.types.getTypeParser(oid, format as 'text');
  },
} as pg.CustomTypesConfig;

/**
 * An open client to a PostgreSQL connection, after the egress check; it is the caller's to end.
 * `searchPath`: the one schema an unqualified name resolves in (a tenant's pinned schema, runs/reach.ts).
 */
export async function connectPostgres(conn: ResolvedConnection, egress: EgressPolicy, purpose: string, searchPath?: string): Promise<pg.Client> {
  if (conn.vendor !== 'POSTGRESQL') throw new Error(`connection ${conn.connectionId} is ${conn.vendor}, not PostgreSQL`);
  if (!conn.host) throw new Error(`connection ${conn.connectionId} has no host`);
  const port = conn.port ?? 5432;
  await egress.check(conn.host, port);
  const client = new pg.Client({
    host: conn.host,
    port,
    user: conn.username,
    password: conn.password ?? '',
    database: conn.database,
    types,
    connectionTimeoutMillis: 30_000,
    application_name: `bi-controller ${purpose}`.slice(0, 63),
  });
  client.on('error', () => {}); // a dropped connection surfaces on the next query
  try {
    await client.connect();
  } catch (err) {
    void client.end().catch(() => {});
    throw new Error(`cannot connect to PostgreSQL ${conn.host}:${port} (connection ${conn.connectionId}): ${(err as Error).message}`);
  }
  if (searchPath !== undefined) {
    try {
      await client.query(`SET search_path TO ${ident(searchPath)}`);
    } catch (err) {
      void client.end().catch(() => {});
      throw new Error(`cannot set the search_path of connection ${conn.connectionId} to ${searchPath}: ${(err as Error).message}`);
    }
  }
  return client;
}

/** `"schema"."table"` with identifiers quoted. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
export const qualified = (schema: string | undefined, table: string): string => (schema ? `${ident(schema)}.${ident(table)}` : ident(table));
