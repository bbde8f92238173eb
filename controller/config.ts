import { resolve } from 'node:path';

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
  /** Behind a TLS-terminating proxy: trust X-Forwarded-* (session cookies get `Secure`). */
  trustProxy: boolean;
  adminUser?: string;
  adminPassword?: string;
  secretKey?: string;
  /** Bearer token `GET /metrics` requires; open when unset. */
  metricsToken?: string;
  git?: GitConfig;
  /** BI_PIPELINE_FILES_DIR: file sources and custom reconcile mappings are read below it only. */
  pipelineFilesDir: string;
  /** BI_PIPELINE_EGRESS: hosts (`host` or `host:port`) pipelines may reach; empty = any but the forbidden ones. */
  pipelineEgress: string[];
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

/** Reads a duration: plain milliseconds, or `30s`, `5m`, `250ms`. */
export function parseDuration(v: string | undefined, fallbackMs: number): number {
  if (!v) return fallbackMs;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(v.trim());
  if (!m) return fallbackMs;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] as number;
  return Math.round(Number(m[1]) * unit);
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
  return {
    host: env.HOST || '127.0.0.1',
    port: num(env.PORT, 8080),
    manifestsDir: resolve(env.BI_MANIFESTS_DIR ?? './manifests'),
    dbPath,
    dataDir: resolve(dbPath, '..'),
    bodyLimit: num(env.BI_BODY_LIMIT, 1024 * 1024),
    logLevel: env.BI_LOG_LEVEL || 'info',
    trustProxy: /^(1|true|yes)$/i.test(env.BI_TRUST_PROXY ?? ''),
    adminUser: env.BI_ADMIN_USER || undefined,
    adminPassword: env.BI_ADMIN_PASSWORD || undefined,
    secretKey: env.BI_SECRET_KEY || undefined,
    metricsToken: env.BI_METRICS_TOKEN || undefined,
    git,
    pipelineFilesDir: resolve(env.BI_PIPELINE_FILES_DIR || resolve(dbPath, '..', 'pipeline-files')),
    pipelineEgress: (env.BI_PIPELINE_EGRESS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    auth: authConfig(env),
    ...overrides,
  };
}
