import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import type { StatusFilter, StatusRecord } from '../../controller/reconciler/status.ts';
import type { ReconcileEvent } from '../../controller/reconciler/types.ts';
import { principalOf } from '../auth/principal.ts';
import webhook from './reconciler-webhook.ts';
import { reconcileStatusSchema, reconcilerSchemas } from '../schemas/reconciler.ts';

/** A comment line keeps proxies from closing an idle event stream. */
export const HEARTBEAT_MS = 15_000;

/** The status filter as the edge checked it: a kind the reconciler applies, a phase. */
type StatusQuery = StatusFilter;

/** One row of `GET /v1/reconciler/status`. */
export function statusItem(s: StatusRecord, warnings?: string[]) {
  return {
    ...(warnings?.length ? { warnings } : {}),
    key: s.key,
    kind: s.kind,
    name: s.name,
    path: s.path,
    phase: s.phase,
    reason: s.reason,
    message: s.message,
    attempts: s.attempts,
    nextRetryAt: s.nextRetryAt,
    resourceIds: s.resourceIds,
    lastAppliedRevision: s.lastAppliedRevision,
    lastAttemptedRevision: s.lastAttemptedRevision,
    lastTransitionAt: s.lastTransitionAt,
    generatedBy: s.generatedBy,
    inputId: s.inputId,
  };
}

/** A git URL as shown to users: credentials (`https://user:token@host/...`) left out. */
export function publicGitUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString();
  } catch {
    // scp-like `git@host:org/repo.git`: its user is no secret.
    return url;
  }
}

/**
 * The reconciler's own endpoints: per-manifest status, sync now, the live event stream and
 * (git mode) the push webhook.
 */
export default async function reconcilerRoutes(app: FastifyInstance): Promise<void> {
  const streams = new Set<() => void>();
  const authz = app.runtime.authz;
  // Open event streams would keep the server from closing.
  app.addHook('preClose', async () => {
    for (const end of [...streams]) end();
  });

  // No CSRF header: a browser's EventSource cannot send one; the stream is read-only and the
  // session cookie is SameSite=Strict.
  app.get('/v1/reconciler/events', { schema: reconcilerSchemas.events }, async (req: FastifyRequest, reply: FastifyReply) => {
    const reconciler = app.runtime.reconciler;
    const caller = principalOf(req);
    // A member sees only the events of their clients' objects.
    const mayRead = (e: ReconcileEvent) => authz.can(caller, 'read', { kind: 'manifest', key: e.key });
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
    });
    res.write(': connected\n\n');
    const onEvent = (e: ReconcileEvent) => {
      if (!mayRead(e)) return;
      res.write(`data: ${JSON.stringify(e)}\n\n`);
      // Node corks a response's socket until the next tick; the steps of one apply run within a
      // tick (one transaction), so without this they would leave together after the last one,
      // racing the write's own HTTP answer. Each event leaves now.
      res.socket?.uncork();
    };
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), HEARTBEAT_MS);
    heartbeat.unref();
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      reconciler.off('event', onEvent);
      streams.delete(end);
      if (!res.writableEnded) res.end();
    };
    reconciler.on('event', onEvent);
    streams.add(end);
    req.raw.on('close', end);
    res.on('close', end);
    res.on('error', end);
  });

  app.get<{ Querystring: StatusQuery }>('/v1/reconciler/status', { schema: reconcileStatusSchema(app.runtime.reconciler.kinds) }, async (req) => {
    const rt = app.runtime;
    const filter: StatusFilter = { ...(req.query.kind ? { kind: req.query.kind } : {}), ...(req.query.phase ? { phase: req.query.phase } : {}) };
    const caller = principalOf(req);
    const git = rt.gitSource;
    const g = rt.config.git;
    const warned = rt.reconciler.warnings.all();
    return {
      success: true,
      revision: git ? git.revision : null,
      source: git && g ? { type: 'git', location: publicGitUrl(g.url), branch: g.branch, path: g.path } : { type: 'directory', location: rt.source.root },
      ready: rt.reconciler.ready,
      pruneBlocked: rt.reconciler.pruneBlocked ?? null,
      ...(git?.lastError ? { gitError: git.lastError } : {}),
      items: rt.reconciler
        .listStatus(filter)
        .filter((s) => authz.can(caller, 'read', { kind: 'manifest', key: s.key }))
        .map((s) => statusItem(s, s.path === null ? undefined : warned.get(s.path))),
    };
  });

  // The body (optional) is checked at the edge (schemas/api.schema.json `SyncRequest`).
  app.post<{ Body: { allowMassPrune?: boolean } | undefined }>(
    '/v1/reconciler/sync',
    { schema: reconcilerSchemas.sync },
    async (req) => {
      const rt = app.runtime;
      const report = await rt.syncNow({ allowMassPrune: req.body?.allowMassPrune === true });
      return {
        success: true,
        revision: rt.gitSource ? rt.gitSource.revision : null,
        scanned: report.scanned,
        applied: report.applied,
        skipped: report.skipped,
        invalid: report.invalid,
        pruned: report.pruned,
        failed: report.failed,
        pruneBlocked: report.pruneBlocked ?? null,
      };
    },
  );

  // Retry now (the console): the manifest's file reconciled again as it is.
  // The body is checked at the edge (schemas/api.schema.json `RetryRequest`).
  app.post<{ Body: { key: string } }>('/v1/reconciler/retry', { schema: reconcilerSchemas.retry }, async (req) => {
    const { key } = req.body;
    const result = await app.runtime.track(() => app.runtime.reconciler.retry(key));
    if (!result) throw new NotFoundError(`Manifest ${key} not found`);
    return { success: true, key: result.key, phase: result.phase, reason: result.reason, message: result.message };
  });

  await app.register(webhook);
}
