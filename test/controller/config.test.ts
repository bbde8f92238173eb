import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDuration } from '../../controller/config.ts';
import { Runtime } from '../../controller/runtime.ts';

describe('loadConfig', () => {
  it('has the defaults of DESIGN.md', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      host: '127.0.0.1',
      port: 8080,
      manifestsDir: resolve('manifests'),
      dbPath: resolve('data/bi.sqlite'),
      dataDir: resolve('data'),
      bodyLimit: 1024 * 1024,
      logLevel: 'info',
      trustProxy: false,
      git: undefined,
      pipelineFilesDir: resolve('data/pipeline-files'),
      pipelineEgress: [],
    });
  });

  it('reads the pipeline settings: files folder (default beside the store) and the egress allow-list', () => {
    expect(loadConfig({ BI_DB_PATH: '/srv/d/x.sqlite' }).pipelineFilesDir).toBe('/srv/d/pipeline-files');
    expect(loadConfig({ BI_PIPELINE_FILES_DIR: '/srv/in', BI_PIPELINE_EGRESS: ' api.example.com, db.internal:5432 ,' })).toMatchObject({
      pipelineFilesDir: '/srv/in',
      pipelineEgress: ['api.example.com', 'db.internal:5432'],
    });
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
    expect(c).toMatchObject({ host: '0.0.0.0', port: 9090, manifestsDir: '/srv/m', dbPath: '/srv/d/x.sqlite', dataDir: '/srv/d', trustProxy: true });
    expect(c.git).toMatchObject({ url: 'file:///srv/r.git', branch: 'main', path: 'deploy', intervalMs: 300_000 });
  });

  it('reads the authentication settings, which the one AuthService of the runtime uses', async () => {
    expect(loadConfig({}).auth).toEqual({});
    const auth = loadConfig({ BI_API_KEY_RATE_LIMIT: '0', BI_LOGIN_MAX_FAILURES: '3', BI_SESSION_TTL: '30m', BI_SESSION_MAX_AGE: '24h' }).auth;
    expect(auth).toEqual({ keyRateLimit: 0, loginMaxFailures: 3, sessionMs: 1_800_000, absoluteMs: 86_400_000 });
    expect(loadConfig({ BI_API_KEY_RATE_LIMIT: '-1', BI_LOGIN_MAX_FAILURES: 'x' }).auth).toEqual({});
    const dir = mkdtempSync(join(tmpdir(), 'bi-config-'));
    const rt = new Runtime({ config: { ...loadConfig({}, { dbPath: join(dir, 'bi.sqlite'), dataDir: dir, manifestsDir: join(dir, 'm') }), auth } });
    try {
      expect(rt.auth.settings).toMatchObject({ keyRateLimit: 0, login: { perUsername: 3, perIp: 15 }, sessionTtls: { sessionMs: 1_800_000, absoluteMs: 86_400_000 } });
    } finally {
      await rt.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads durations', () => {
    expect([parseDuration('250ms', 1), parseDuration('30s', 1), parseDuration('2', 1), parseDuration('1h', 1), parseDuration('x', 7)]).toEqual([
      250, 30_000, 2000, 3_600_000, 7,
    ]);
  });
});
