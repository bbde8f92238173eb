import type { FastifyInstance } from 'fastify';
import { listConnections, readConnectionSummary } from '../../controller/kinds/connection/registry.ts';
import { recordConnectionTest } from '../../controller/kinds/connection/tests.ts';
import { DEFAULT_TEST_TIMEOUT_MS, testConnection, type TestResult } from '../../controller/connections/test-connection.ts';
import { NotFoundError } from '../../controller/errors.ts';
import { StoreConnectionResolver } from '../../controller/runs/engine/connections.ts';
import { principalOf } from '../auth/principal.ts';
import { connectionSchemas } from '../schemas/connections.ts';

/**
 * The settings UI's connections page (S, admin): every stored connection with where it points,
 * its owner, its last test and what uses it; and Test, which connects with the connection's own
 * credential and records the outcome as its last test.
 */
export default async function connectionRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;
  const resolver = new StoreConnectionResolver({ db: rt.db, secrets: rt.secrets });

  app.get('/v1/bi/admin/connections/:userId', { schema: connectionSchemas.list }, async () => ({ success: true, connections: listConnections(rt.db) }));

  app.post('/v1/bi/admin/connections/:connectionId/test/:userId', { schema: connectionSchemas.test }, async (req) => {
    const { connectionId } = req.params as { connectionId: string };
    if (!readConnectionSummary(rt.db, connectionId)) throw new NotFoundError(`Connection ${connectionId} not found`);
    let result: Pick<TestResult, 'ok' | 'message' | 'durationMs'>;
    try {
      const conn = resolver.resolve(connectionId);
      result = await testConnection(conn, { timeoutMs: DEFAULT_TEST_TIMEOUT_MS });
    } catch (err) {
      // The credential could not be read (environment variable unset, secret refused): a failed test.
      if (err instanceof NotFoundError) throw err;
      result = { ok: false, message: `Not tested, no password was sent: ${(err as Error).message}`, durationMs: 0 };
    }
    recordConnectionTest(rt.db, connectionId, result, rt.clock(), principalOf(req).userId);
    req.log.info({ connectionId, ok: result.ok, by: principalOf(req).userId }, 'connection tested');
    return { success: true, connection: readConnectionSummary(rt.db, connectionId) };
  });
}
