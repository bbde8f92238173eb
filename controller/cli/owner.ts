import { request } from 'node:http';
import type { StoreOwner } from '../store/owner.ts';

/** The answer of a running server's control socket. */
export type OwnerAnswer = { ok: true; body: Record<string, unknown> } | { ok: false; status: number; error: string };

/**
 * POSTs `body` to `path` on the owner's control socket (see api/control-socket.ts). Undefined when
 * the owner has no socket or it cannot be reached: the caller then refuses.
 */
export function callOwner(owner: StoreOwner, path: string, body: Record<string, unknown>): Promise<OwnerAnswer | undefined> {
  const socketPath = owner.socket;
  if (!socketPath) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const req = request({ socketPath, path, method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', () => resolve(undefined));
      res.on('end', () => {
        let parsed: Record<string, unknown>;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        } catch {
          return resolve(undefined);
        }
        const status = res.statusCode ?? 500;
        resolve(status === 200 ? { ok: true, body: parsed } : { ok: false, status, error: typeof parsed.error === 'string' ? parsed.error : `status ${status}` });
      });
    });
    req.on('error', () => resolve(undefined));
    req.end(JSON.stringify(body));
  });
}
