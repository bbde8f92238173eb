import type { FastifyInstance } from 'fastify';
import { matchesHash } from '../../controller/auth/tokens.ts';
import { sha256 } from '../../controller/hash.ts';
import { observabilitySchemas } from '../schemas/observability.ts';

/**
 * `GET /metrics` (Prometheus text format; bearer BI_METRICS_TOKEN when set), the notifiers'
 * delivery state, and the hook that times every request by route template. Registered first
 * and without encapsulation, so its hook sees every route of the app.
 */
async function observabilityRoutes(app: FastifyInstance): Promise<void> {
  const metrics = app.runtime.metrics;
  const token = app.runtime.config.metricsToken;
  const tokenHash = token ? sha256(token) : undefined;

  // A callback hook, not an async one: no promise per request.
  app.addHook('onResponse', (req, reply, done) => {
    // The template (`/v1/sdk/dashboards/:facadeId`), never the raw path: IDs stay out of labels.
    metrics.observeHttp(req.method, req.routeOptions.url, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });

  // Public as far as sessions and keys go: its own bearer token (BI_METRICS_TOKEN) guards it.
  app.get('/metrics', { schema: observabilitySchemas.metrics }, async (req, reply) => {
    if (tokenHash) {
      const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
      if (!m || !matchesHash(m[1], tokenHash)) {
        return reply.status(401).header('www-authenticate', 'Bearer realm="metrics"').send({ error: 'Metrics token required' });
      }
    }
    const { contentType, body } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });

  app.get('/v1/reconciler/notifiers', { schema: observabilitySchemas.notifiers }, async () => ({
    notifiers: app.runtime.notifications.store.deliveries(),
  }));
}

// Like fastify-plugin: the hook above applies to the whole app, not only to this plugin's routes.
(observabilityRoutes as unknown as Record<symbol, boolean>)[Symbol.for('skip-override')] = true;

export default observabilityRoutes;
