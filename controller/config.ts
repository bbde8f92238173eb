import { resolve } from 'node:path';
import proxyAddr from '@fastify/proxy-addr';
import { DEFAULT_SCHEDULE_MIN_INTERVAL_MS } from './kinds/pipeline/schedule.ts';

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
  auth: AuthConfig;
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

const num = (v: string | undefined, fallback: number): number => {
  const n = Number(v);
  return v !== undefined && v !== '' && Number.isFinite(n) ? n : fallback;
};

/** Reads a duration: plain milliseconds, or `30s`, `5m`, `250ms`, `30d`. */
export function parseDuration(v: string | undefined, fallbackMs: number): number {
  if (!v) return fallbackMs;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(v.trim());
  if (!m) return fallbackMs;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] ?? 's'] as number;
  return Math.round(Number(m[1]) * unit);
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
  if (v === undefined || v === '') return fallback;
  const ms = parseDuration(v, Number.NaN);
  if (!Number.isFinite(ms) || ms <= 0) throw new Error(`${name}: expected a duration such as 30s or 2m, got ${JSON.stringify(v)}`);
  return ms;
}

export const DEFAULT_RUN_RETENTION_MS = 30 * 86_400_000;

/** BI_SCHEDULE_MIN_INTERVAL (also read by `bictl validate`, which needs no other setting). */
export function scheduleMinInterval(env: NodeJS.ProcessEnv = process.env): number {
  return positiveMs('BI_SCHEDULE_MIN_INTERVAL', env.BI_SCHEDULE_MIN_INTERVAL, DEFAULT_SCHEDULE_MIN_INTERVAL_MS);
}

function authConfig(env: NodeJS.ProcessEnv): AuthConfig {
  const out: AuthConfig = {};
  const rate = Number(env.BI_API_KEY_RATE_LIMIT);
  if (env.BI_API_KEY_RATE_LIMIT && Number.isFinite(rate) && rate >= 0) out.keyRateLimit = rate;
  const failures = Number(env.BI_LOGIN_MAX_FAILURES);
  if (env.BI_LOGIN_MAX_FAILURES && Number.isInteger(failures) && failures > 0) out.loginMaxFailures = failures;
  if (env.BI_SESSION_TTL) out.sessionMs = parseDuration(env.BI_SESSION_TTL, 8 * 3_600_000);
  if (env.BI_SESSION_MAX_AGE) out.absoluteMs = parseDuration(env.BI_SESSION_MAX_AGE, 7 * 24 * 3_600_000);
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const dbPath = resolve(overrides.dbPath ?? env.BI_DB_PATH ?? './data/bi.sqlite');
  const git: GitConfig | undefined = env.BI_GIT_URL
    ? {
        url: env.BI_GIT_URL,
        branch: env.BI_GIT_BRANCH || 'main',
        path: (env.BI_GIT_PATH ?? '').replace(/^\/+|\/+$/g, ''),
        intervalMs: parseDuration(env.BI_GIT_INTERVAL, 30_000),
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
    port: num(env.PORT, 8080),
    manifestsDir: resolve(env.BI_MANIFESTS_DIR ?? './manifests'),
    dbPath,
    dataDir: resolve(dbPath, '..'),
    bodyLimit: num(env.BI_BODY_LIMIT, 1024 * 1024),
    logLevel: env.BI_LOG_LEVEL || 'info',
    trustProxy: parseTrustProxy(env.BI_TRUST_PROXY),
    timeouts,
    adminUser: env.BI_ADMIN_USER || undefined,
    adminPassword: env.BI_ADMIN_PASSWORD || undefined,
    secretKey: env.BI_SECRET_KEY || undefined,
    metricsToken: env.BI_METRICS_TOKEN || undefined,
    git,
    runConcurrency: Math.max(1, Math.floor(num(env.BI_RUN_CONCURRENCY, 2))),
    pipelineFilesDir: resolve(env.BI_PIPELINE_FILES_DIR || resolve(dbPath, '..', 'pipeline-files')),
    pipelineEgress: (env.BI_PIPELINE_EGRESS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    scheduleMinIntervalMs: scheduleMinInterval(env),
    runRetentionMs: positiveMs('BI_RUN_RETENTION', env.BI_RUN_RETENTION, DEFAULT_RUN_RETENTION_MS),
    auth: authConfig(env),
    ...overrides,
  };
}
