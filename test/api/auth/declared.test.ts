import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { PUBLIC_ROUTE, assertAuthDeclared, requireApiKey, requireSession } from '../../../api/auth/guards.ts';

/** A route without an authorization declaration stops the app from starting (buildApp's onRoute hook). */
describe('every route declares who may call it', () => {
  const app = () => {
    const a = Fastify();
    a.addHook('onRoute', assertAuthDeclared);
    return a;
  };

  it('refuses at registration a route with neither a guard nor config PUBLIC_ROUTE', async () => {
    const a = app();
    expect(() => a.get('/v1/new-thing', async () => ({}))).toThrow('route GET /v1/new-thing declares no authorization');
    // A preHandler that is not one of the guards does not count.
    expect(() => a.post('/v1/other', { preHandler: async () => {} }, async () => ({}))).toThrow('route POST /v1/other declares no authorization');
    await a.close();
  });

  it('accepts a guard (alone or among other preHandlers) or an explicit PUBLIC_ROUTE', async () => {
    const a = app();
    const fake = a as unknown as Parameters<typeof requireApiKey>[0];
    expect(() => a.get('/a', { preHandler: requireApiKey(fake) }, async () => ({}))).not.toThrow();
    expect(() => a.get('/s', { preHandler: [async () => {}, requireSession(fake, { role: 'admin' })] }, async () => ({}))).not.toThrow();
    expect(() => a.get('/p', { config: PUBLIC_ROUTE }, async () => ({}))).not.toThrow();
    await a.close();
  });
});
