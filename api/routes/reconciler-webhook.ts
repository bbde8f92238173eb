import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { reconcilerSchemas } from '../schemas/reconciler.ts';

/** `sha256=<hex>` of the HMAC SHA-256 of `body` with `secret` (the X-Hub-Signature-256 header). */
export function signBody(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Constant-time check of an X-Hub-Signature-256 header against the raw body. */
export function verifySignature(secret: string, body: Buffer, header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header.trim());
  // The length is not secret (always 71 bytes); comparing equal lengths keeps timingSafeEqual happy.
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * `POST /v1/reconciler/webhook`: a push hook signed with BI_GIT_WEBHOOK_SECRET triggers a fetch
 * at once. Its own encapsulated context keeps the raw body (the signature covers the bytes).
 */
export default async function webhookRoutes(app: FastifyInstance): Promise<void> {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Public: the HMAC signature of the body is its authentication.
  app.post('/v1/reconciler/webhook', { schema: reconcilerSchemas.webhook }, async (req, reply) => {
    const rt = app.runtime;
    const git = rt.gitSource;
    const secret = rt.config.git?.webhookSecret;
    if (!git) return reply.status(404).send({ success: false, error: 'Git mode is not enabled (set BI_GIT_URL)' });
    if (!secret) return reply.status(404).send({ success: false, error: 'Webhook is not configured (set BI_GIT_WEBHOOK_SECRET)' });
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    if (!verifySignature(secret, body, req.headers['x-hub-signature-256'])) {
      return reply.status(401).send({ success: false, error: 'Invalid signature' });
    }
    // Answer at once (hook senders time out); the fetch and sync run under the writer lock.
    git.requestSync();
    return reply.status(202).send({ success: true, accepted: true });
  });
}
