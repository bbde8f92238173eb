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
  auth: AuthConfig;
  /** The default manifests folder is used: `serve` seeds it with the shipped examples when it does not exist. */
  seedManifests?: boolean;
  /** BI_STRICT_MANIFESTS: an unknown manifest field is an error (Invalid, 400), not a warning. */
  strictManifests: boolean;
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

const isSet = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

function authConfig(env: NodeJS.ProcessEnv): AuthConfig {
  const out: AuthConfig = {};
  if (isSet(env.BI_API_KEY_RATE_LIMIT)) out.keyRateLimit = parseNumber('BI_API_KEY_RATE_LIMIT', env.BI_API_KEY_RATE_LIMIT, 0, 0);
  if (isSet(env.BI_LOGIN_MAX_FAILURES)) out.loginMaxFailures = parseInteger('BI_LOGIN_MAX_FAILURES', env.BI_LOGIN_MAX_FAILURES, 0, { min: 1 });
  if (isSet(env.BI_SESSION_TTL)) out.sessionMs = positiveMs('BI_SESSION_TTL', env.BI_SESSION_TTL, 8 * 3_600_000);
  if (isSet(env.BI_SESSION_MAX_AGE)) out.absoluteMs = positiveMs('BI_SESSION_MAX_AGE', env.BI_SESSION_MAX_AGE, 7 * 24 * 3_600_000);
  return out;
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
    auth: authConfig(env),
    strictManifests: strictManifests(env),
    ...overrides,
  };
}
