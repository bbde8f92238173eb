import { mkdtempSync, mkdirSync, rmSync, writeFileSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../api/app.ts';
import { loadConfig } from '../../controller/config.ts';
import { createRuntime, type Runtime, type RuntimeOptions } from '../../controller/runtime.ts';
import { DirectorySource } from '../../controller/sources/directory.ts';
import { FakeClock, ManualScheduler } from './clock.ts';
import { checkResponses } from './openapi.ts';
import { testSchemas } from './schemas.ts';

export interface TestRuntime {
  rt: Runtime;
  dir: string;
  manifests: string;
  clock: FakeClock;
  scheduler: ManualScheduler;
  /** The manifests folder, read on demand (no watcher threads in unit tests). */
  source: DirectorySource;
  /** Writes a manifest file (object → YAML, string as is) under the manifests root. */
  write(relPath: string, content: unknown): void;
  remove(relPath: string): void;
  /** A full sync of the manifests folder. */
  sync(opts?: { allowMassPrune?: boolean }): ReturnType<Runtime['syncNow']>;
  /** Reopens the runtime on the same folder and store (a restart). */
  restart(): Promise<TestRuntime>;
  close(): Promise<void>;
}

export function manifest(kind: string, name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return { apiVersion: 'bi.controller/v1', kind, metadata: { name }, spec };
}

export { testSchemas };

/** A runtime on a temp folder and store, with a fake clock and a manual scheduler; `env` is read as the configuration's environment. */
export async function makeTestRuntime(opts: Partial<RuntimeOptions> & { dir?: string; env?: NodeJS.ProcessEnv } = {}): Promise<TestRuntime> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'bi-test-'));
  const manifests = join(dir, 'manifests');
  mkdirSync(manifests, { recursive: true });
  const clock = new FakeClock();
  const scheduler = new ManualScheduler();
  const source = new DirectorySource({ root: manifests, watch: false });
  const config = loadConfig(opts.env ?? {}, { manifestsDir: manifests, dbPath: join(dir, 'data', 'bi.sqlite'), dataDir: join(dir, 'data') });
  const rt = createRuntime({ config, clock: clock.now, scheduler: scheduler.schedule, random: () => 0, source, schemas: (opts.config ?? config).strictManifests ? undefined : testSchemas(), ...opts });
  await rt.start();
  const t: TestRuntime = {
    rt,
    dir,
    manifests,
    clock,
    scheduler,
    source,
    write(relPath, content) {
      const abs = join(manifests, relPath);
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, typeof content === 'string' ? content : stringify(content));
    },
    remove(relPath) {
      unlinkSync(join(manifests, relPath));
    },
    sync: (o = {}) => rt.syncNow(o),
    restart: async () => {
      await rt.stop();
      return makeTestRuntime({ ...opts, dir });
    },
    close: async () => {
      await rt.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

export interface TestApp extends TestRuntime {
  app: FastifyInstance;
}

/** The HTTP app on a test runtime; drive it with `app.inject()`. */
export async function makeTestApp(opts: Partial<RuntimeOptions> & { dir?: string; env?: NodeJS.ProcessEnv } = {}): Promise<TestApp> {
  const t = await makeTestRuntime(opts);
  return withApp(t, await buildApp({ runtime: t.rt }));
}

/** A test runtime plus an app built on it; closing closes both. Every response is checked against the OpenAPI document. */
export async function withApp(t: TestRuntime, app: FastifyInstance): Promise<TestApp> {
  await app.ready();
  return {
    ...t,
    app: checkResponses(app),
    close: async () => {
      await app.close();
      await t.close();
    },
  };
}
