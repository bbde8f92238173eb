import { chmodSync, unlinkSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { NotFoundError, UnavailableError } from '../controller/errors.ts';
import type { SyncReport } from '../controller/reconciler/types.ts';
import type { Runtime } from '../controller/runtime.ts';

/**
 * The server's local control socket: a unix socket in the data folder (mode 0600, so only the
 * store's own user reaches it) through which `bictl sync` and `bictl rollback` go while the
 * server runs, so the server stays the one writer of its store. No HTTP authentication: being
 * able to open the socket is being the operator of this data folder.
 */

/** Longest unix socket path Linux and macOS accept (sun_path, with its terminating zero). */
export const MAX_SOCKET_PATH = 103;

/** A sync's report with the messages of the keys that failed or are invalid (the CLI prints them). */
export interface ControlSyncAnswer {
  report: SyncReport;
  messages: Record<string, string>;
  revert?: string | null;
}

export interface ControlSocket {
  path: string;
  close(): Promise<void>;
}

const MAX_BODY = 64 * 1024;

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error('body too large');
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  const body: unknown = text ? JSON.parse(text) : {};
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('body must be a JSON object');
  return body as Record<string, unknown>;
}

function answerOf(rt: Runtime, report: SyncReport): ControlSyncAnswer {
  const messages: Record<string, string> = {};
  for (const key of [...report.failed, ...report.invalid]) messages[key] = rt.reconciler.status.get(key)?.message ?? '';
  return { report, messages };
}

async function handle(rt: Runtime, req: IncomingMessage): Promise<{ status: number; body: unknown }> {
  if (req.method !== 'POST') return { status: 405, body: { error: 'POST only' } };
  const body = await readJson(req);
  if (req.url === '/sync') {
    const report = await rt.syncNow({ allowMassPrune: body.allowMassPrune === true });
    return { status: 200, body: answerOf(rt, report) };
  }
  if (req.url === '/rollback') {
    const git = rt.gitSource;
    const cfg = rt.config.git;
    if (!git || !cfg) return { status: 409, body: { error: 'needs git mode (set BI_GIT_URL)' } };
    if (typeof body.revision !== 'string' || body.revision === '') return { status: 400, body: { error: 'revision must be a string' } };
    const message = typeof body.message === 'string' ? body.message : undefined;
    const r = await rt.track(() => git.rollback(body.revision as string, { name: cfg.authorName, email: cfg.authorEmail }, message));
    return { status: 200, body: { ...answerOf(rt, r.report), revert: r.revert, branch: cfg.branch } };
  }
  return { status: 404, body: { error: `no ${req.url ?? ''}` } };
}

function statusOf(err: unknown): number {
  if (err instanceof NotFoundError) return 404;
  if (err instanceof UnavailableError) return 503;
  return 500;
}

/** Listens on `path` (a leftover socket of a crashed server is replaced: the caller owns the store). */
export async function listenControlSocket(rt: Runtime, path: string): Promise<ControlSocket> {
  try {
    unlinkSync(path);
  } catch {
    /* none left */
  }
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    handle(rt, req).then(
      ({ status, body }) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      (err: unknown) => res.writeHead(statusOf(err), { 'content-type': 'application/json' }).end(JSON.stringify({ error: (err as Error).message })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(path, 0o600);
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
