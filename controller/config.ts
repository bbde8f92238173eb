import { resolve } from 'node:path';
import proxyAddr from '@fastify/proxy-addr';

const compileTrust = (proxies: readonly string[]) => proxyAddr.compile([...proxies]);

/** Everything the process can be told, from the environment (flags of `bictl` override it). */
export interface Config {
  host: string;
  port: number;
  manifestsDir: string;
  dbPath: string;
  /** Data directory: the store's folder; git mode keeps its working clone here. */
  dataDir: string;
  bodyLimit: number;
  logLevel: string;
  /**
   * Which proxies in front are trusted with X-Forwarded-For/-Proto (client address for login
   * limits, `Secure` cookies): none, the nearest `hops`, or the ones at these addresses/CIDRs.
   */
  trustProxy: TrustProxy;
  /** Connection timeouts (ms), applied where the server listens. */
  timeouts: ServerTimeouts;
  adminUser?: string;
  adminPassword?: string;
  secretKey?: string;
  /** Bearer token `GET /metrics` requires; open when unset. */
  metricsToken?: string;
  git?: GitConfig;
  /** BI_RUN_CONCURRENCY: pipeline runs executing at once in this process (more wait queued). */
  runConcurrency: number;
  /** `--adopt-source`: make the configured source the store's own (see store/source.ts). */
  adoptSource?: boolean;
  /** BI_PIPELINE_FILES_DIR: file sources and custom reconcile mappings are read below it only. */
  pipelineFilesDir: string;
  /** BI_PIPELINE_EGRESS: hosts (`host` or `host:port`) pipelines may reach; empty = any but the forbidden ones. */
  pipelineEgress: string[];
  /** BI_SCHEDULE_MIN_INTERVAL: a schedule fires at most once per this (a more frequent one is refused). */
  scheduleMinIntervalMs: number;
  /** BI_RUN_RETENTION: finished runs older than this are deleted (the last 20 of each pipeline are kept). */
  runRetentionMs: number;
  /** BI_RUN_MAX_RESPONSE_BYTES: one source response (API page, S3 object) at most. */
  runMaxResponseBytes: number;
  /** BI_RUN_MAX_RECORD_BYTES: one source record (CSV/NDJSON line, JSON element) at most. */
  runMaxRecordBytes: number;
  auth: AuthConfig;
  /** BI_RETENTION: how long an offboarded client is kept before it may be purged. */
  retentionMs: number;
  /** BI_PURGE_DRY_RUN: a purge answers what it would remove and removes nothing. */
  purgeDryRun: boolean;
  /** BI_AUDIT_RETENTION: audit entries older than this are pruned (the chain stays verifiable); undefined = keep all. */
  auditRetentionMs?: number;
  /** The default manifests folder is used: `serve` seeds it with the shipped examples when it does not exist. */
  seedManifests?: boolean;
  /** BI_STRICT_MANIFESTS: an unknown manifest field is an error (Invalid, 400), not a warning. */
  strictManifests: boolean;
  /** Queue mode (README "Runs on more than one machine"): set when BI_QUEUE_URL is. */
  queue?: QueueConfig;
}

/** The PostgreSQL job queue and the workers' reports (BI_QUEUE_URL, BI_WORKER_*). */
export interface QueueConfig {
  /** BI_QUEUE_URL: the PostgreSQL database of the job queue (jobs only, never run records). */
  url: string;
  /** BI_QUEUE_SCHEMA: its schema (default `bi_queue`). */
  schema: string;
  /** BI_WORKER_TOKEN: the bearer token of the workers' reports (controller) / sent with them (worker). */
  workerToken?: string;
  /** BI_CONTROLLER_URL: where a worker reports (worker side). */
  controllerUrl?: string;
  /** BI_WORKER_NAME: the worker's name on its runs (default `<hostname>:<pid>`). */
  workerName?: string;
  /** BI_WORKER_HEARTBEAT_INTERVAL: how often a worker reports it is up (default 10 s). */
  heartbeatMs: number;
  /** BI_WORKER_LOST_AFTER: a worker silent this long is lost and its runs fail `interrupted` (default 30 s). */
  lostMs: number;
}

/** Authentication settings from the environment; unset ones keep the AuthService defaults. */
export interface AuthConfig {
  /** BI_API_KEY_RATE_LIMIT: requests per second per key, 0 = no limit. */
  keyRateLimit?: number;
  /** BI_LOGIN_MAX_FAILURES: failed logins per username per window (per IP: five times this). */
  loginMaxFailures?: number;
  /** BI_SESSION_TTL: idle lifetime of a session. */
  sessionMs?: number;
  /** BI_SESSION_MAX_AGE: a session never outlives this from login. */
  absoluteMs?: number;
}

/** `BI_TRUST_PROXY`: `false`; a hop count (`true` = 1); or proxy addresses / CIDRs / `loopback`… */
export type TrustProxy = false | { hops: number } | { proxies: readonly string[] };

export interface ServerTimeouts {
  /** The request line and headers must be in within this (slowloris). */
  headersMs: number;
  /** The whole request, body included, must be in within this. */
  requestMs: number;
  /** A keep-alive connection with no request in flight is closed after this. */
  keepAliveMs: number;
  /** A socket with no bytes either way for this long is closed (a stalled upload or reader). */
  idleMs: number;
}

export const DEFAULT_TIMEOUTS: ServerTimeouts = { headersMs: 30_000, requestMs: 120_000, keepAliveMs: 5_000, idleMs: 60_000 };

export interface GitConfig {
  url: string;
  branch: string;
  /** Sub-folder of the repository holding the manifests ('' = the root). */
  path: string;
  intervalMs: number;
  webhookSecret?: string;
  authorName: string;
  authorEmail: string;
}

/** Not tracked in git: what the API writes never lands among the shipped examples (`manifests/`). */
export const DEFAULT_MANIFESTS_DIR = './workspace/manifests';

const DURATION_UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Reads a duration with its unit: `250ms`, `30s`, `5m`, `8h`, `30d` (`0` alone is zero). Unset or
 * empty gives `fallbackMs`. A number without a unit is refused, naming `name`: it was read as
 * seconds while the documentation said milliseconds (`BI_GIT_INTERVAL=30000` polled every 8.3 h),
 * so neither reading is guessed any more. So is anything else that is not a duration.
 */
export function parseDuration(v: string | undefined, fallbackMs: number, name = 'duration'): number {
  if (v === undefined || v.trim() === '') return fallbackMs;
  const text = v.trim();
  if (text === '0') return 0;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text);
  if (m) return Math.round(Number(m[1]) * (DURATION_UNITS[m[2]] as number));
  if (/^\d+(\.\d+)?$/.test(text)) throw new Error(`${name}: ${JSON.stringify(v)} has no unit: write ${text}ms or ${text}s (units: ms, s, m, h, d)`);
  throw new Error(`${name}: expected a duration such as 30s or 2m, got ${JSON.stringify(v)}`);
}

/** An integer variable within `[min, max]`; unset or empty gives `fallback`, anything else stops the start naming it. */
export function parseInteger(name: string, v: string | undefined, fallback: number, range: { min: number; max?: number }): number {
  if (v === undefined || v.trim() === '') return fallback;
  const text = v.trim();
  const n = /^-?\d+$/.test(text) ? Number(text) : Number.NaN;
  const max = range.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isSafeInteger(n) || n < range.min || n > max) {
    const bounds = range.max === undefined ? `an integer of at least ${range.min}` : `an integer from ${range.min} to ${range.max}`;
    throw new Error(`${name}: expected ${bounds}, got ${JSON.stringify(v)}`);
  }
  return n;
}

/** A number variable of at least `min` (fractions allowed). */
function parseNumber(name: string, v: string | undefined, fallback: number, min: number): number {
  if (v === undefined || v.trim() === '') return fallback;
  const n = /^\d+(\.\d+)?$|^-\d+(\.\d+)?$/.test(v.trim()) ? Number(v.trim()) : Number.NaN;
  if (!Number.isFinite(n) || n < min) throw new Error(`${name}: expected a number of at least ${min}, got ${JSON.stringify(v)}`);
  return n;
}

/** `true`/`false` (also `1`/`0`, `yes`/`no`); unset or empty gives `fallback`, anything else stops the start. */
export function parseBoolean(name: string, v: string | undefined, fallback: boolean): boolean {
  if (v === undefined || v.trim() === '') return fallback;
  if (/^(true|1|yes)$/i.test(v.trim())) return true;
  if (/^(false|0|no)$/i.test(v.trim())) return false;
  throw new Error(`${name}: expected true or false, got ${JSON.stringify(v)}`);
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parseLogLevel(v: string | undefined): string {
  if (v === undefined || v.trim() === '') return 'info';
  if (!LOG_LEVELS.includes(v.trim())) throw new Error(`BI_LOG_LEVEL: expected one of ${LOG_LEVELS.join(', ')}, got ${JSON.stringify(v)}`);
  return v.trim();
}

/** BI_STRICT_MANIFESTS, for the commands that validate without a whole configuration (`bictl validate`). */
export function strictManifests(env: NodeJS.ProcessEnv): boolean {
  return parseBoolean('BI_STRICT_MANIFESTS', env.BI_STRICT_MANIFESTS, false);
}

/**
 * Reads `BI_TRUST_PROXY`. `true` means one hop: the address the one proxy in front saw (the last
 * X-Forwarded-For entry), never the entries a client wrote before it. Addresses are checked here,
 * so a typo stops the start instead of trusting nobody (or everybody) silently.
 */
export function parseTrustProxy(v: string | undefined): TrustProxy {
  const text = (v ?? '').trim();
  if (!text || /^(0|false|no)$/i.test(text)) return false;
  if (/^(true|yes)$/i.test(text)) return { hops: 1 };
  if (/^\d+$/.test(text)) return { hops: Number(text) };
  const proxies = text.split(',').map((p) => p.trim()).filter(Boolean);
  try {
    compileTrust(proxies);
  } catch (err) {
    throw new Error(`BI_TRUST_PROXY: ${(err as Error).message} (expected true, false, a hop count, or proxy addresses/CIDRs separated by commas)`);
  }
  return { proxies };
}

/** Whether the `i`-th address from the socket (0 = the peer itself) is a trusted proxy. */
export function trustFunction(trust: TrustProxy): ((addr: string, i: number) => boolean) | false {
  if (trust === false) return false;
  if ('hops' in trust) {
    const hops = trust.hops;
    return (_addr, i) => i < hops;
  }
  return compileTrust(trust.proxies);
}

function positiveMs(name: string, v: string | undefined, fallback: number): number {
  const ms = parseDuration(v, fallback, name);
  if (ms <= 0) throw new Error(`${name}: expected a duration such as 30s or 2m, got ${JSON.stringify(v)}`);
  return ms;
}

export const DEFAULT_RUN_RETENTION_MS = 30 * 86_400_000;
/** BI_SCHEDULE_MIN_INTERVAL's default: a schedule fires at most once a minute. */
export const DEFAULT_SCHEDULE_MIN_INTERVAL_MS = 60_000;
/** BI_RUN_MAX_RESPONSE_BYTES and BI_RUN_MAX_RECORD_BYTES defaults. */
export const DEFAULT_SOURCE_LIMITS = { maxResponseBytes: 256 * 1024 * 1024, maxRecordBytes: 1024 * 1024 } as const;

/** BI_SCHEDULE_MIN_INTERVAL (also read by `bictl validate`, which needs no other setting). */
export function scheduleMinInterval(env: NodeJS.ProcessEnv = process.env): number {
  return positiveMs('BI_SCHEDULE_MIN_INTERVAL', env.BI_SCHEDULE_MIN_INTERVAL, DEFAULT_SCHEDULE_MIN_INTERVAL_MS);
}
const isSet = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

const BYTE_UNITS: Record<string, number> = { '': 1, b: 1, k: 1024, kb: 1000, kib: 1024, m: 1024 ** 2, mb: 1000 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1000 ** 3, gib: 1024 ** 3 };

/** Reads a size: plain bytes, or `512KiB`, `256MiB`, `1GiB` (also `k`/`M`/`G` = KiB/MiB/GiB, `KB`/`MB`/`GB` decimal). */
export function parseBytes(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined || v.trim() === '') return fallback;
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(v.trim());
  const unit = m ? BYTE_UNITS[(m[2] ?? '').toLowerCase()] : undefined;
  const bytes = m && unit ? Math.floor(Number(m[1]) * unit) : Number.NaN;
  if (!Number.isFinite(bytes) || bytes <= 0) throw new Error(`${name}: expected a size such as 1048576, 512KiB or 256MiB, got ${JSON.stringify(v)}`);
  return bytes;
}

function authConfig(env: NodeJS.ProcessEnv): AuthConfig {
  const out: AuthConfig = {};
  if (isSet(env.BI_API_KEY_RATE_LIMIT)) out.keyRateLimit = parseNumber('BI_API_KEY_RATE_LIMIT', env.BI_API_KEY_RATE_LIMIT, 0, 0);
  if (isSet(env.BI_LOGIN_MAX_FAILURES)) out.loginMaxFailures = parseInteger('BI_LOGIN_MAX_FAILURES', env.BI_LOGIN_MAX_FAILURES, 0, { min: 1 });
  if (isSet(env.BI_SESSION_TTL)) out.sessionMs = positiveMs('BI_SESSION_TTL', env.BI_SESSION_TTL, 8 * 3_600_000);
  if (isSet(env.BI_SESSION_MAX_AGE)) out.absoluteMs = positiveMs('BI_SESSION_MAX_AGE', env.BI_SESSION_MAX_AGE, 7 * 24 * 3_600_000);
  return out;
}

function queueConfig(env: NodeJS.ProcessEnv): QueueConfig | undefined {
  if (!env.BI_QUEUE_URL) return undefined;
  return {
    url: env.BI_QUEUE_URL,
    schema: env.BI_QUEUE_SCHEMA || 'bi_queue',
    workerToken: env.BI_WORKER_TOKEN || undefined,
    controllerUrl: env.BI_CONTROLLER_URL || undefined,
    workerName: env.BI_WORKER_NAME || undefined,
    heartbeatMs: positiveMs('BI_WORKER_HEARTBEAT_INTERVAL', env.BI_WORKER_HEARTBEAT_INTERVAL, 10_000),
    lostMs: positiveMs('BI_WORKER_LOST_AFTER', env.BI_WORKER_LOST_AFTER, 30_000),
  };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const dbPath = resolve(overrides.dbPath ?? env.BI_DB_PATH ?? './data/bi.sqlite');
  const git: GitConfig | undefined = env.BI_GIT_URL
    ? {
        url: env.BI_GIT_URL,
        branch: env.BI_GIT_BRANCH || 'main',
        path: (env.BI_GIT_PATH ?? '').replace(/^\/+|\/+$/g, ''),
        intervalMs: positiveMs('BI_GIT_INTERVAL', env.BI_GIT_INTERVAL, 30_000),
        webhookSecret: env.BI_GIT_WEBHOOK_SECRET || undefined,
        authorName: env.BI_GIT_AUTHOR_NAME || 'bi-controller',
        authorEmail: env.BI_GIT_AUTHOR_EMAIL || 'bi-controller@users.noreply.bi-controller.local',
      }
    : undefined;
  const timeouts: ServerTimeouts = {
    headersMs: positiveMs('BI_HEADERS_TIMEOUT', env.BI_HEADERS_TIMEOUT, DEFAULT_TIMEOUTS.headersMs),
    requestMs: positiveMs('BI_REQUEST_TIMEOUT', env.BI_REQUEST_TIMEOUT, DEFAULT_TIMEOUTS.requestMs),
    keepAliveMs: positiveMs('BI_KEEP_ALIVE_TIMEOUT', env.BI_KEEP_ALIVE_TIMEOUT, DEFAULT_TIMEOUTS.keepAliveMs),
    idleMs: positiveMs('BI_IDLE_TIMEOUT', env.BI_IDLE_TIMEOUT, DEFAULT_TIMEOUTS.idleMs),
  };
  if (timeouts.headersMs > timeouts.requestMs) throw new Error('BI_HEADERS_TIMEOUT must not be longer than BI_REQUEST_TIMEOUT');
  return {
    host: env.HOST || '127.0.0.1',
    port: parseInteger('PORT', env.PORT, 8080, { min: 0, max: 65_535 }),
    manifestsDir: resolve(env.BI_MANIFESTS_DIR || DEFAULT_MANIFESTS_DIR),
    seedManifests: !env.BI_MANIFESTS_DIR && !git && overrides.manifestsDir === undefined,
    dbPath,
    dataDir: resolve(dbPath, '..'),
    bodyLimit: parseInteger('BI_BODY_LIMIT', env.BI_BODY_LIMIT, 1024 * 1024, { min: 1 }),
    logLevel: parseLogLevel(env.BI_LOG_LEVEL),
    trustProxy: parseTrustProxy(env.BI_TRUST_PROXY),
    timeouts,
    adminUser: env.BI_ADMIN_USER || undefined,
    adminPassword: env.BI_ADMIN_PASSWORD || undefined,
    secretKey: env.BI_SECRET_KEY || undefined,
    metricsToken: env.BI_METRICS_TOKEN || undefined,
    git,
    runConcurrency: parseInteger('BI_RUN_CONCURRENCY', env.BI_RUN_CONCURRENCY, 2, { min: 1 }),
    pipelineFilesDir: resolve(env.BI_PIPELINE_FILES_DIR || resolve(dbPath, '..', 'pipeline-files')),
    pipelineEgress: (env.BI_PIPELINE_EGRESS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    scheduleMinIntervalMs: scheduleMinInterval(env),
    runRetentionMs: positiveMs('BI_RUN_RETENTION', env.BI_RUN_RETENTION, DEFAULT_RUN_RETENTION_MS),
    runMaxResponseBytes: parseBytes('BI_RUN_MAX_RESPONSE_BYTES', env.BI_RUN_MAX_RESPONSE_BYTES, DEFAULT_SOURCE_LIMITS.maxResponseBytes),
    runMaxRecordBytes: parseBytes('BI_RUN_MAX_RECORD_BYTES', env.BI_RUN_MAX_RECORD_BYTES, DEFAULT_SOURCE_LIMITS.maxRecordBytes),
    auth: authConfig(env),
    queue: queueConfig(env),
    retentionMs: positiveMs('BI_RETENTION', env.BI_RETENTION, 30 * 86_400_000),
    purgeDryRun: parseBoolean('BI_PURGE_DRY_RUN', env.BI_PURGE_DRY_RUN, false),
    ...(env.BI_AUDIT_RETENTION && !/^(keep|0)$/i.test(env.BI_AUDIT_RETENTION)
      ? { auditRetentionMs: positiveMs('BI_AUDIT_RETENTION', env.BI_AUDIT_RETENTION, Number.NaN) }
      : {}),
    strictManifests: strictManifests(env),
    ...overrides,
  };
}
