import type { FastifyInstance } from 'fastify';
import type { Config } from '../controller/config.ts';
import { UserStore } from '../controller/auth/users.ts';
import { createLogger, type Logger } from '../controller/log.ts';
import { Runtime } from '../controller/runtime.ts';
import type { SyncReport } from '../controller/reconciler/types.ts';
import { redactUrl } from '../controller/sources/git.ts';
import { EXAMPLES_DIR, seedManifests } from '../controller/sources/seed.ts';
import { checkDataDirPlacement, checkStoreSource } from '../controller/store/source.ts';
import { removeStaleTempFiles } from '../controller/writers/directory.ts';
import { buildApp } from './app.ts';
import { consoleUrl, firstStartHint } from './first-start.ts';

export interface Server {
  app: FastifyInstance;
  runtime: Runtime;
  url: string;
  close(): Promise<void>;
}

/** The first admin from BI_ADMIN_USER / BI_ADMIN_PASSWORD when absent; the dummy login hash computed ahead. */
async function bootstrapAuth(runtime: Runtime): Promise<void> {
  const auth = runtime.auth;
  const { adminUser, adminPassword } = runtime.config;
  if (adminUser && adminPassword) {
    const admin = await auth.ensureAdmin(adminUser, adminPassword);
    if (admin) runtime.log.info({ userId: admin.userId, username: admin.username }, 'first admin created');
  } else if (adminUser || adminPassword) {
    runtime.log.warn('BI_ADMIN_USER and BI_ADMIN_PASSWORD must both be set to create the first admin');
  }
  await auth.warmUp();
}

/** How long a stop lets requests finish before it kills the git processes they wait on. */
const DRAIN_GRACE_MS = 3000;

/** `bictl serve`: the runtime, its first sync, the HTTP API on HOST:PORT. */
export async function startServer(config: Config, opts: { log?: Logger } = {}): Promise<Server> {
  const log = opts.log ?? createLogger({ level: config.logLevel });
  checkDataDirPlacement(config);
  if (config.seedManifests && seedManifests(config.manifestsDir)) log.info({ manifests: config.manifestsDir, from: EXAMPLES_DIR }, 'seeded the manifests folder with the examples');
  const runtime = new Runtime({ config, log });
  try {
    checkStoreSource(runtime.db, config, { record: true, adopt: config.adoptSource });
    if (!config.git) {
      const removed = await removeStaleTempFiles(runtime.source.root);
      if (removed.length) log.warn({ files: removed.length, first: removed[0] }, 'removed temp files left by a crash');
    }
    await bootstrapAuth(runtime);
  } catch (err) {
    await runtime.stop();
    throw err;
  }
  const app = await buildApp({ runtime, logger: log, trustProxy: config.trustProxy, timeouts: config.timeouts });
  const url = await app.listen({ host: config.host, port: config.port });
  runtime.runs.listening(Number(new URL(url).port));
  log.info({ url, console: consoleUrl(url), manifests: runtime.source.root, db: config.dbPath, git: config.git ? `${redactUrl(config.git.url)}#${config.git.branch}` : undefined }, 'listening');
  const hint = firstStartHint(url, new UserStore({ db: runtime.db, clock: runtime.clock }).count());
  if (hint) log.warn(hint);
  // Serve /healthz at once; /readyz turns 200 when the first full sync is done (a folder
  // source has its watches in place before it lists the folder, so nothing changed meanwhile is missed).
  const t0 = performance.now();
  runtime.reconciler.once('ready', (report: SyncReport) =>
    log.info(
      { objects: report.scanned, applied: report.applied.length, failed: report.failed.length, invalid: report.invalid.length, ms: Math.round(performance.now() - t0) },
      'first sync done',
    ),
  );
  const started = runtime.start().then(
    () => log.info({ ms: Math.round(performance.now() - t0) }, config.git ? 'polling' : 'watching'),
    (err: Error) => log.error({ err: err.message }, 'first sync failed'),
  );
  let closing: Promise<void> | undefined;
  return {
    app,
    runtime,
    url,
    close: () =>
      (closing ??= (async () => {
        // Requests drain for a while; then the source stops, killing git processes still
        // waiting on a remote that does not answer, so neither a hanging push nor a first sync
        // that cannot finish holds the stop.
        const drained = app.close();
        let grace: NodeJS.Timeout | undefined;
        await Promise.race([drained, new Promise<void>((resolve) => (grace = setTimeout(resolve, DRAIN_GRACE_MS)))]);
        clearTimeout(grace);
        await runtime.source.stop();
        await drained;
        await started;
        await runtime.stop();
      })()),
  };
}
