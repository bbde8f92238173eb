import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ROOT } from '../../controller/paths.ts';
import { HIDDEN } from '../schemas/common.ts';
import { PUBLIC_ROUTE } from '../auth/guards.ts';

/** The settings UI: static HTML/CSS/JS from api/ui, no build step, no third-party origin. */

export const UI_DIR = join(ROOT, 'api', 'ui');

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.ico': 'image/x-icon',
};

// Only our own origin: no CDN, no inline script, no framing.
export const UI_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cache-control': 'no-cache',
};

interface Asset {
  body: Buffer;
  type: string;
}

/** Every file under `dir` whose type we serve, keyed by its `/`-separated relative path. */
export function loadAssets(dir: string = UI_DIR): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const abs = join(d, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else if (TYPES[extname(name)]) assets.set(relative(dir, abs).split(sep).join('/'), { body: readFileSync(abs), type: TYPES[extname(name)] as string });
    }
  };
  walk(dir);
  return assets;
}

export default async function ui(app: FastifyInstance): Promise<void> {
  // Read once at start: the set of servable files is fixed, so no request can reach outside it.
  const assets = loadAssets();
  const send = (reply: FastifyReply, asset: Asset): FastifyReply => reply.headers(UI_SECURITY_HEADERS).type(asset.type).send(asset.body);
  const index = assets.get('index.html');

  app.get('/', { config: PUBLIC_ROUTE, schema: HIDDEN }, async (_req, reply) => reply.redirect('/ui/'));
  app.get('/ui', { config: PUBLIC_ROUTE, schema: HIDDEN }, async (_req, reply) => reply.redirect('/ui/'));
  app.get('/ui/', { config: PUBLIC_ROUTE, schema: HIDDEN }, async (_req, reply) => {
    if (!index) return reply.status(404).send({ success: false, error: 'UI not installed' });
    return send(reply, index);
  });
  app.get('/ui/*', { config: PUBLIC_ROUTE, schema: HIDDEN }, async (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    const asset = assets.get(path);
    if (!asset) return reply.status(404).send({ success: false, error: `Route GET /ui/${path} not found` });
    return send(reply, asset);
  });
}
