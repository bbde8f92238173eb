import pg from 'pg';
import type { ConnectionSpec } from '../kinds/connection/applier.ts';
import { postgresEndpoint, snowflakeAccessUrl } from '../lib/endpoints.ts';

/** What Test Connection needs: the connection's fields plus the plaintext password (never stored here). */
export type ConnectionTarget = Pick<ConnectionSpec, 'vendor' | 'accountUrl' | 'host' | 'port' | 'warehouse' | 'database' | 'schema' | 'username'> & {
  password?: string;
};

export interface TestResult {
  ok: boolean;
  vendor: ConnectionTarget['vendor'];
  /** One sentence for the UI: what was reached, or why not. */
  message: string;
  durationMs: number;
  /** Server version, when the server answered. */
  serverVersion?: string;
}

export interface TestOptions {
  /** Upper bound for the whole test (connect + queries); the answer never takes longer. */
  timeoutMs?: number;
  now?: () => number;
}

export const DEFAULT_TEST_TIMEOUT_MS = 10_000;

class Timeout extends Error {}

/** Resolves with `work`, or rejects with Timeout after `ms` (the work is left to clean itself up). */
function bounded<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout()), ms);
    timer.unref();
  });
  return Promise.race([work, limit]).finally(() => clearTimeout(timer));
}

const seconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`;

/** Driver errors → a sentence a person setting up a client can act on. */
export function describeError(err: unknown, where: string, user?: string): string {
  const e = err as { code?: string; message?: string; errno?: string };
  switch (e.code) {
    case 'ECONNREFUSED':
      return `Connection refused by ${where}: is the server running and listening there?`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `Host of ${where} could not be resolved`;
    case 'ETIMEDOUT':
      return `No answer from ${where} (timed out)`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `${where} is unreachable from the controller`;
    case '28P01':
    case '28000':
      return `Authentication failed for user ${user ?? '(none)'} on ${where}`;
    case '3D000':
      return `Database does not exist on ${where}: ${e.message ?? ''}`.trim();
    default:
      return `Could not connect to ${where}: ${e.message ?? String(err)}`;
  }
}

async function testPostgres(t: ConnectionTarget, timeoutMs: number): Promise<Omit<TestResult, 'durationMs' | 'vendor'>> {
  const endpoint = postgresEndpoint(t);
  if (!endpoint) return { ok: false, message: 'A host (or an account URL such as postgresql://host:5432) is required' };
  const where = `${endpoint.host}:${endpoint.port}${t.database ? `/${t.database}` : ''}`;
  const client = new pg.Client({
    host: endpoint.host,
    port: endpoint.port,
    user: t.username,
    password: t.password ?? '',
    database: t.database,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs,
    statement_timeout: timeoutMs,
    application_name: 'bi-controller test-connection',
  });
  client.on('error', () => {}); // a socket error after the test must not crash the process
  try {
    await bounded(client.connect(), timeoutMs);
    const version = (await client.query<{ v: string }>('SELECT current_setting($1) AS v', ['server_version'])).rows[0]?.v;
    await client.query('SELECT 1');
    if (t.schema) {
      const found = await client.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [t.schema]);
      if (found.rowCount === 0) {
        return { ok: false, serverVersion: version, message: `Connected to PostgreSQL ${version} at ${where}, but schema ${t.schema} does not exist` };
      }
    }
    return { ok: true, serverVersion: version, message: `Connected to PostgreSQL ${version} at ${where}${t.schema ? `; schema ${t.schema} found` : ''}` };
  } catch (err) {
    if (err instanceof Timeout) return { ok: false, message: `No answer from ${where} within ${seconds(timeoutMs)}` };
    return { ok: false, message: describeError(err, where, t.username) };
  } finally {
    void client.end().catch(() => {});
  }
}

interface SnowflakeConnection {
  connect(callback: (err: unknown) => void): unknown;
  destroy(fn: (err: unknown) => void): void;
}

async function testSnowflake(t: ConnectionTarget, timeoutMs: number): Promise<Omit<TestResult, 'durationMs' | 'vendor'>> {
  const accessUrl = t.accountUrl ? snowflakeAccessUrl(t.accountUrl) : undefined;
  if (!accessUrl) return { ok: false, message: 'An account URL such as https://<account>.snowflakecomputing.com is required' };
  if (!t.username) return { ok: false, message: 'A username is required' };
  const where = new URL(accessUrl).host;
  const { default: snowflake } = await import('snowflake-sdk');
  snowflake.configure({ logLevel: 'OFF' });
  let conn: SnowflakeConnection;
  try {
    conn = snowflake.createConnection({
      accessUrl,
      username: t.username,
      password: t.password ?? '',
      warehouse: t.warehouse,
      database: t.database,
      schema: t.schema,
      application: 'bi-controller',
      timeout: timeoutMs,
      sfRetryMaxLoginRetries: 1,
    }) as unknown as SnowflakeConnection;
  } catch (err) {
    return { ok: false, message: `Invalid Snowflake settings: ${(err as Error).message}` };
  }
  try {
    // connect(callback), not connectAsync(): the latter reports some failures only to a callback.
    await bounded(
      new Promise<void>((resolve, reject) => {
        conn.connect((err) => (err ? reject(err) : resolve()));
      }),
      timeoutMs,
    );
    return { ok: true, message: `Connected to Snowflake at ${where}` };
  } catch (err) {
    if (err instanceof Timeout) return { ok: false, message: `No answer from Snowflake at ${where} within ${seconds(timeoutMs)}` };
    const cause = (err as { cause?: unknown }).cause;
    return { ok: false, message: describeError(cause ?? err, `Snowflake at ${where}`, t.username) };
  } finally {
    try {
      conn.destroy(() => {});
    } catch {
      // never connected: nothing to close
    }
  }
}

/**
 * Really connects to the warehouse with the typed credentials and answers within `timeoutMs`:
 * PostgreSQL through `pg` (SELECT 1, the schema must exist), Snowflake through `snowflake-sdk`.
 */
export async function testConnection(target: ConnectionTarget, opts: TestOptions = {}): Promise<TestResult> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TEST_TIMEOUT_MS;
  const now = opts.now ?? Date.now;
  const started = now();
  const run = target.vendor === 'POSTGRESQL' ? testPostgres(target, timeoutMs) : testSnowflake(target, timeoutMs);
  // The drivers have their own timeouts; this outer bound (plus a grace second) is the promise the UI relies on.
  const result = await bounded(run, timeoutMs + 1000).catch((err: unknown) =>
    err instanceof Timeout
      ? { ok: false, message: `No answer within ${seconds(timeoutMs)}` }
      : { ok: false, message: `Test failed: ${(err as Error).message}` },
  );
  return { ...result, vendor: target.vendor, durationMs: Math.max(0, now() - started) };
}
