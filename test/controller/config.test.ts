import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDuration, parseTrustProxy, trustFunction } from '../../controller/config.ts';
import { testSchemas } from '../helpers/runtime.ts';
import { createRuntime } from '../../controller/runtime.ts';

describe('loadConfig', () => {
  it('has the defaults of docs/contract/design.md', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      manifestsDir: resolve('workspace/manifests'),
      seedManifests: true,
      dbPath: resolve('data/bi.sqlite'),
      dataDir: resolve('data'),
      bodyLimit: 1024 * 1024,
      logLevel: 'info',
      trustProxy: false,
      timeouts: { headersMs: 30_000, requestMs: 120_000, keepAliveMs: 5_000, idleMs: 60_000 },
      git: undefined,
      pipelineFilesDir: resolve('data/pipeline-files'),
      pipelineEgress: [],
      strictManifests: false,
    });
  });

  it('seeds only the default manifests folder (never a configured one, never in git mode)', () => {
    expect(loadConfig({ BI_MANIFESTS_DIR: '/srv/m' }).seedManifests).toBe(false);
    expect(loadConfig({ BI_GIT_URL: 'file:///r.git' }).seedManifests).toBe(false);
    expect(loadConfig({}, { manifestsDir: '/tmp/m' }).seedManifests).toBe(false);
  });

  it('reads the pipeline settings: files folder (default beside the store) and the egress allow-list', () => {
    expect(loadConfig({ BI_DB_PATH: '/srv/d/x.sqlite' }).pipelineFilesDir).toBe('/srv/d/pipeline-files');
    expect(loadConfig({ BI_PIPELINE_FILES_DIR: '/srv/in', BI_PIPELINE_EGRESS: ' api.example.com, db.internal:5432 ,' })).toMatchObject({
      pipelineFilesDir: '/srv/in',
      pipelineEgress: ['api.example.com', 'db.internal:5432'],
    });
  });

  it('reads the source limits: BI_RUN_MAX_RESPONSE_BYTES (256 MiB) and BI_RUN_MAX_RECORD_BYTES (1 MiB), plain bytes or with a unit', () => {
    expect(loadConfig({})).toMatchObject({ runMaxResponseBytes: 268_435_456, runMaxRecordBytes: 1_048_576 });
    expect(loadConfig({ BI_RUN_MAX_RESPONSE_BYTES: '64MiB', BI_RUN_MAX_RECORD_BYTES: '4096' })).toMatchObject({ runMaxResponseBytes: 67_108_864, runMaxRecordBytes: 4096 });
    expect(loadConfig({ BI_RUN_MAX_RESPONSE_BYTES: '1GB', BI_RUN_MAX_RECORD_BYTES: '512k' })).toMatchObject({ runMaxResponseBytes: 1e9, runMaxRecordBytes: 524_288 });
    expect(() => loadConfig({ BI_RUN_MAX_RECORD_BYTES: '0' })).toThrow('BI_RUN_MAX_RECORD_BYTES: expected a size such as 1048576, 512KiB or 256MiB, got "0"');
    expect(() => loadConfig({ BI_RUN_MAX_RESPONSE_BYTES: 'lots' })).toThrow(/^BI_RUN_MAX_RESPONSE_BYTES: expected a size/);
  });

  it('reads the environment', () => {
    const c = loadConfig({
      HOST: '0.0.0.0',
      PORT: '9090',
      BI_MANIFESTS_DIR: '/srv/m',
      BI_DB_PATH: '/srv/d/x.sqlite',
      BI_TRUST_PROXY: 'true',
      BI_GIT_URL: 'file:///srv/r.git',
      BI_GIT_PATH: '/deploy/',
      BI_GIT_INTERVAL: '5m',
    });
    expect(c).toMatchObject({ host: '0.0.0.0', port: 9090, manifestsDir: '/srv/m', dbPath: '/srv/d/x.sqlite', dataDir: '/srv/d', trustProxy: { hops: 1 } });
    expect(c.git).toMatchObject({ url: 'file:///srv/r.git', branch: 'main', path: 'deploy', intervalMs: 300_000 });
  });

  it('reads BI_RUN_CONCURRENCY (at least 1)', () => {
    expect(loadConfig({}).runConcurrency).toBe(2);
    expect(loadConfig({ BI_RUN_CONCURRENCY: '8' }).runConcurrency).toBe(8);
    expect(() => loadConfig({ BI_RUN_CONCURRENCY: '0' })).toThrow('BI_RUN_CONCURRENCY: expected an integer of at least 1, got "0"');
  });

  it('reads the authentication settings, which the one AuthService of the runtime uses', async () => {
    expect(loadConfig({}).auth).toEqual({});
    const auth = loadConfig({ BI_API_KEY_RATE_LIMIT: '0', BI_LOGIN_MAX_FAILURES: '3', BI_SESSION_TTL: '30m', BI_SESSION_MAX_AGE: '24h' }).auth;
    expect(auth).toEqual({ keyRateLimit: 0, loginMaxFailures: 3, sessionMs: 1_800_000, absoluteMs: 86_400_000 });
    expect(() => loadConfig({ BI_API_KEY_RATE_LIMIT: '-1' })).toThrow('BI_API_KEY_RATE_LIMIT: expected a number of at least 0, got "-1"');
    expect(() => loadConfig({ BI_LOGIN_MAX_FAILURES: 'x' })).toThrow('BI_LOGIN_MAX_FAILURES: expected an integer of at least 1, got "x"');
    const dir = mkdtempSync(join(tmpdir(), 'bi-config-'));
    const rt = createRuntime({ config: { ...loadConfig({}, { dbPath: join(dir, 'bi.sqlite'), dataDir: dir, manifestsDir: join(dir, 'm') }), auth }, schemas: testSchemas() });
    try {
      expect(rt.auth.settings).toMatchObject({ keyRateLimit: 0, login: { perUsername: 3, perIp: 15 }, sessionTtls: { sessionMs: 1_800_000, absoluteMs: 86_400_000 } });
    } finally {
      await rt.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads durations with their unit; unset gives the default', () => {
    expect([parseDuration('250ms', 1), parseDuration('30s', 1), parseDuration('5m', 1), parseDuration('1h', 1), parseDuration('30d', 1), parseDuration('0', 1), parseDuration(undefined, 7), parseDuration('', 7)]).toEqual([
      250, 30_000, 300_000, 3_600_000, 2_592_000_000, 0, 7, 7,
    ]);
    expect(parseDuration('30d', 1)).toBe(30 * 86_400_000);
  });

  it('reads BI_SCHEDULE_MIN_INTERVAL (default 1m) and BI_RUN_RETENTION (default 30d), refusing what is not a duration', () => {
    expect(loadConfig({})).toMatchObject({ scheduleMinIntervalMs: 60_000, runRetentionMs: 30 * 86_400_000 });
    expect(loadConfig({ BI_SCHEDULE_MIN_INTERVAL: '5s', BI_RUN_RETENTION: '7d' })).toMatchObject({ scheduleMinIntervalMs: 5000, runRetentionMs: 7 * 86_400_000 });
    expect(() => loadConfig({ BI_SCHEDULE_MIN_INTERVAL: 'often' })).toThrow('BI_SCHEDULE_MIN_INTERVAL: expected a duration such as 30s or 2m, got "often"');
    expect(() => loadConfig({ BI_RUN_RETENTION: '0' })).toThrow('BI_RUN_RETENTION: expected a duration');
  });

  it('refuses a duration without a unit, and anything else that is not one, naming the variable', () => {
    // Was read as seconds while the README said milliseconds: BI_GIT_INTERVAL=30000 polled every 8.3 h.
    expect(() => loadConfig({ BI_GIT_URL: 'file:///r.git', BI_GIT_INTERVAL: '30000' })).toThrow(
      'BI_GIT_INTERVAL: "30000" has no unit: write 30000ms or 30000s (units: ms, s, m, h, d)',
    );
    expect(() => loadConfig({ BI_SESSION_TTL: '8 hours' })).toThrow('BI_SESSION_TTL: expected a duration such as 30s or 2m, got "8 hours"');
    expect(() => loadConfig({ BI_IDLE_TIMEOUT: '60' })).toThrow(/^BI_IDLE_TIMEOUT: "60" has no unit/);
    expect(() => loadConfig({ BI_GIT_URL: 'file:///r.git', BI_GIT_INTERVAL: '0' })).toThrow(/^BI_GIT_INTERVAL: expected a duration/);
  });

  it('refuses numbers, ports, booleans and levels it cannot read, naming the variable (no silent default)', () => {
    expect(() => loadConfig({ PORT: 'abc' })).toThrow('PORT: expected an integer from 0 to 65535, got "abc"');
    expect(() => loadConfig({ PORT: '70000' })).toThrow('PORT: expected an integer from 0 to 65535, got "70000"');
    expect(() => loadConfig({ PORT: '80.5' })).toThrow(/^PORT: /);
    expect(() => loadConfig({ BI_BODY_LIMIT: '1MB' })).toThrow('BI_BODY_LIMIT: expected an integer of at least 1, got "1MB"');
    expect(() => loadConfig({ BI_STRICT_MANIFESTS: 'ture' })).toThrow('BI_STRICT_MANIFESTS: expected true or false, got "ture"');
    expect(() => loadConfig({ BI_LOG_LEVEL: 'verbose' })).toThrow(/^BI_LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent/);
    expect(loadConfig({ PORT: ' 9090 ', BI_STRICT_MANIFESTS: 'true' })).toMatchObject({ port: 9090, strictManifests: true });
  });
});

describe('BI_TRUST_PROXY', () => {
  it('reads false, true (= one hop), a hop count, and proxy addresses / CIDRs', () => {
    expect(['', 'false', '0', 'no'].map(parseTrustProxy)).toEqual([false, false, false, false]);
    expect(parseTrustProxy('true')).toEqual({ hops: 1 });
    expect(parseTrustProxy('2')).toEqual({ hops: 2 });
    expect(parseTrustProxy('10.0.0.1, 192.168.0.0/16,loopback')).toEqual({ proxies: ['10.0.0.1', '192.168.0.0/16', 'loopback'] });
  });

  it('refuses an address it cannot read, saying which forms it takes', () => {
    expect(() => parseTrustProxy('10.0.0.300')).toThrow(/^BI_TRUST_PROXY: .*10\.0\.0\.300.*hop count/);
    expect(() => loadConfig({ BI_TRUST_PROXY: 'proxy.internal' })).toThrow(/BI_TRUST_PROXY/);
  });

  it('a hop count trusts exactly that many addresses from the socket', () => {
    const trust = trustFunction({ hops: 2 });
    expect(trust && [0, 1, 2].map((i) => trust('1.2.3.4', i))).toEqual([true, true, false]);
    expect(trustFunction(false)).toBe(false);
  });
});

describe('timeouts', () => {
  it('are read as durations and checked', () => {
    const c = loadConfig({ BI_HEADERS_TIMEOUT: '5s', BI_REQUEST_TIMEOUT: '1m', BI_KEEP_ALIVE_TIMEOUT: '2s', BI_IDLE_TIMEOUT: '90s' });
    expect(c.timeouts).toEqual({ headersMs: 5000, requestMs: 60_000, keepAliveMs: 2000, idleMs: 90_000 });
    expect(() => loadConfig({ BI_HEADERS_TIMEOUT: 'soon' })).toThrow('BI_HEADERS_TIMEOUT: expected a duration such as 30s or 2m, got "soon"');
    expect(() => loadConfig({ BI_HEADERS_TIMEOUT: '3m' })).toThrow('BI_HEADERS_TIMEOUT must not be longer than BI_REQUEST_TIMEOUT');
  });

  it('reads the lifecycle settings: BI_RETENTION (30d by default, days allowed), BI_PURGE_DRY_RUN, BI_AUDIT_RETENTION (keep by default)', () => {
    const d = loadConfig({});
    expect([d.retentionMs, d.purgeDryRun, d.auditRetentionMs]).toEqual([30 * 86_400_000, false, undefined]);
    const c = loadConfig({ BI_RETENTION: '7d', BI_PURGE_DRY_RUN: 'true', BI_AUDIT_RETENTION: '365d' });
    expect([c.retentionMs, c.purgeDryRun, c.auditRetentionMs]).toEqual([7 * 86_400_000, true, 365 * 86_400_000]);
    expect(loadConfig({ BI_AUDIT_RETENTION: 'keep' }).auditRetentionMs).toBeUndefined();
    expect(() => loadConfig({ BI_RETENTION: 'soon' })).toThrow(/BI_RETENTION/);
  });
});
