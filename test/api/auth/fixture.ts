import { buildApp } from '../../../api/app.ts';
import { PUBLIC_ROUTE, requireApiKey, requireSession } from '../../../api/auth/guards.ts';
import { HIDDEN } from '../../../api/schemas/common.ts';
import type { AuthSettings } from '../../../controller/auth/service.ts';
import type { TrustProxy } from '../../../controller/config.ts';
import type { Logger } from '../../../controller/log.ts';
import { TEST_PASSWORD_COST } from '../../helpers/auth.ts';
import { makeTestRuntime, withApp, type TestApp, type TestRuntime } from '../../helpers/runtime.ts';

/**
 * The real app plus probe routes (not in the OpenAPI document) behind each guard (on onRequest, as the
 * guards of real routes, which come from their schema's `auth`), so the guards are tested through HTTP
 * before the other issues' A and S endpoints exist:
 *   GET /probe/a                 A
 *   GET /probe/s/:userId         S
 *   GET /probe/s                 S, no userId in the path
 *   GET /probe/admin/:userId     S, admin
 *   GET /probe/nocsrf/:userId    S without the CTN check
 */
export async function makeAuthApp(
  opts: { settings?: Partial<AuthSettings>; logger?: Logger; trustProxy?: TrustProxy | boolean; from?: TestRuntime } = {},
): Promise<TestApp> {
  // A runtime handed in (`from`) keeps the authentication settings it was built with.
  const t = opts.from ?? (await makeTestRuntime({ auth: { passwordCost: TEST_PASSWORD_COST, ...opts.settings } }));
  const app = await buildApp({ runtime: t.rt, logger: opts.logger, trustProxy: opts.trustProxy });
  const echo = async (req: { principal?: unknown }) => ({ principal: req.principal });
  await app.register(async (scope) => {
    scope.get('/probe/a', { config: PUBLIC_ROUTE, onRequest: requireApiKey(scope), schema: HIDDEN }, echo);
    scope.get('/probe/s/:userId', { config: PUBLIC_ROUTE, onRequest: requireSession(scope), schema: HIDDEN }, echo);
    scope.get('/probe/s', { config: PUBLIC_ROUTE, onRequest: requireSession(scope), schema: HIDDEN }, echo);
    scope.get('/probe/admin/:userId', { config: PUBLIC_ROUTE, onRequest: requireSession(scope, { role: 'admin' }), schema: HIDDEN }, echo);
    scope.get('/probe/nocsrf/:userId', { config: PUBLIC_ROUTE, onRequest: requireSession(scope, { csrf: false }), schema: HIDDEN }, echo);
  });
  return withApp(t, app);
}
