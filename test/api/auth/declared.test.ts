import Fastify, { type FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ROUTE, installGuard } from '../../../api/auth/guards.ts';
import { route } from '../../../api/schemas/common.ts';

const schema = (auth: 'apiKey' | 'session' | 'admin' | 'public') => route({ method: 'GET', operationId: `op-${auth}`, summary: 's', tags: ['t'], auth, response: {} });

/** A route states who may call it once, in its schema; the guard is installed from it (buildApp's onRoute hook). */
describe('every route declares who may call it', () => {
  const app = () => {
    const a = Fastify() as unknown as FastifyInstance;
    a.addHook('onRoute', (r) => installGuard(a, r));
    return a;
  };

  it('refuses at registration a route with neither a route() schema nor config PUBLIC_ROUTE', async () => {
    const a = app();
    expect(() => a.get('/v1/new-thing', async () => ({}))).toThrow('route GET /v1/new-thing declares no authorization');
    // A preHandler does not declare anything.
    expect(() => a.post('/v1/other', { preHandler: async () => {} }, async () => ({}))).toThrow('route POST /v1/other declares no authorization');
    // Stated twice: refused, so the two cannot disagree.
    expect(() => a.get('/v1/twice', { schema: schema('session'), config: PUBLIC_ROUTE }, async () => ({}))).toThrow('route GET /v1/twice states its access twice');
    await a.close();
  });

  it('puts the guard of the schema first on onRequest; a public schema or PUBLIC_ROUTE gets none', async () => {
    const a = app();
    const seen: Record<string, number> = {};
    a.addHook('onRoute', (r) => {
      seen[r.url] = [r.onRequest ?? []].flat().length;
    });
    const own = async () => {};
    a.get('/a', { schema: schema('apiKey') }, async () => ({}));
    a.get('/s', { schema: schema('admin'), onRequest: own }, async () => ({}));
    a.get('/p', { schema: schema('public') }, async () => ({}));
    a.get('/ui', { config: PUBLIC_ROUTE }, async () => ({}));
    expect(seen).toEqual({ '/a': 1, '/s': 2, '/p': 0, '/ui': 0 });
    await a.close();
  });
});
