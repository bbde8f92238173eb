import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig, parseDuration } from '../../controller/config.ts';

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

  it('reads durations', () => {
    expect([parseDuration('250ms', 1), parseDuration('30s', 1), parseDuration('2', 1), parseDuration('1h', 1), parseDuration('x', 7)]).toEqual([
      250, 30_000, 2000, 3_600_000, 7,
    ]);
  });
});
