import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../controller/config.ts';
import { UserStore } from '../controller/auth/users.ts';
import { createLogger, type Logger } from '../controller/log.ts';
import { createRuntime, type Runtime } from '../controller/runtime.ts';
import type { SyncReport } from '../controller/reconciler/types.ts';
import { redactUrl } from '../controller/lib/redact-url.ts';
import { EXAMPLES_DIR, seedManifests } from '../controller/sources/seed.ts';
import { checkDataDirPlacement, checkStoreSource } from '../controller/store/source.ts';
import { claimStore, CONTROL_SOCKET, releaseStore, updateClaim } from '../controller/store/owner.ts';
import { removeStaleTempFiles } from '../controller/writers/directory.ts';
import { buildApp } from './app.ts';
import { listenControlSocket, MAX_SOCKET_PATH, type ControlSocket } from './control-socket.ts';
import { consoleUrl, firstStartHint } from './first-start.ts';
import type { SchemaRegistry } from '../controller/manifest/validator.ts';

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

/** The control socket `bictl sync` and `rollback` go through; none when its path is too long for a unix socket. */
async function openControlSocket(runtime: Runtime, log: Server['runtime']['log']): Promise<ControlSocket | undefined> {
  const path = join(runtime.config.dataDir, CONTROL_SOCKET);
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH) {
    log.warn({ path }, 'data folder path too long for the control socket: bictl sync and rollback refuse while this server runs');
    return undefined;
  }
  try {
    return await listenControlSocket(runtime, path);
  } catch (err) {
    log.warn({ path, err: (err as Error).message }, 'no control socket: bictl sync and rollback refuse while this server runs');
    return undefined;
  }
}

/** How long a stop lets requests finish before it kills the git processes they wait on. */
const DRAIN_GRACE_MS = 3000;

/** `bictl serve`: the runtime, its first sync, the HTTP API on HOST:PORT. */
export async function startServer(config: Config, opts: { log?: Logger; /** Compiled schemas to share (tests). */ schemas?: SchemaRegistry } = {}): Promise<Server> {
  const log = opts.log ?? createLogger({ level: config.logLevel });
  checkDataDirPlacement(config);
  // One store, one writer: a second server (or a bictl sync in progress) on this store is refused.
  claimStore(config.dataDir, 'serve', (o) => (o.role === 'serve' ? `stop it first, or give this one another BI_DB_PATH` : 'wait for it to finish'));
  if (config.seedManifests && seedManifests(config.manifestsDir)) log.info({ manifests: config.manifestsDir, from: EXAMPLES_DIR }, 'seeded the manifests folder with the examples');
  let runtime: Runtime;
  try {
    runtime = createRuntime({ config, log, schemas: opts.schemas });
  } catch (err) {
    releaseStore(config.dataDir);
    throw err;
  }
  try {
    checkStoreSource(runtime.db, config, { record: true, adopt: config.adoptSource });
    if (!config.git) {
      const removed = await removeStaleTempFiles(runtime.source.root);
      if (removed.length) log.warn({ files: removed.length, first: removed[0] }, 'removed temp files left by a crash');
    }
    await bootstrapAuth(runtime);
  } catch (err) {
    await runtime.stop();
    releaseStore(config.dataDir);
    throw err;
  }
  const app = await buildApp({ runtime, logger: log, trustProxy: config.trustProxy, timeouts: config.timeouts });
  let url: string;
  try {
    url = await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await app.close();
    await runtime.stop();
    releaseStore(config.dataDir);
    throw err;
  }
  runtime.runs.listening(Number(new URL(url).port));
  const control = await openControlSocket(runtime, log);
  updateClaim(config.dataDir, { url, socket: control?.path });
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
        await control?.close();
        await started;
        await runtime.stop();
        releaseStore(config.dataDir);
      })()),
  };
}
