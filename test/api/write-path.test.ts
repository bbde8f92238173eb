import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyRequest } from 'fastify';
import { buildApp } from '../../api/app.ts';
import { principalOf } from '../../api/auth/principal.ts';
import { MAX_MANIFEST_BYTES } from '../../controller/manifest/loader.ts';
import { createUserWithKey } from '../helpers/auth.ts';
import { makeTestRuntime, manifest, withApp, type TestApp } from '../helpers/runtime.ts';

/** The one write path seen from HTTP: limits of the loader, the principal, the error mapper. */
describe('API write path', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.close());

  it('never writes a manifest its own loader would refuse: 413 before anything is written', async () => {
    const rt = await makeTestRuntime();
    // A body limit above the loader's, so the request itself is accepted.
    t = await withApp(rt, await buildApp({ runtime: rt.rt, bodyLimit: 4 * MAX_MANIFEST_BYTES }));
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: 'D2026A00001', name: 'Warehouse' }));
    await t.sync();
    const { headers } = await createUserWithKey(t, { role: 'admin' });
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/sdk/import',
      headers,
      payload: {
        name: 'Huge',
        description: 'x'.repeat(MAX_MANIFEST_BYTES + 10),
        dataSource: { dbId: 'D2026A00001' },
        charts: [{ type: 'kpi', measures: ['revenue'], dimensions: [] }],
      },
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({
      success: false,
      error: `the manifest dashboards/Huge.yaml would be larger than ${MAX_MANIFEST_BYTES} bytes, the limit of the manifest loader`,
    });
    expect(existsSync(join(t.manifests, 'dashboards')) ? readdirSync(join(t.manifests, 'dashboards')) : []).toEqual([]);
    expect(t.rt.reconciler.listStatus({ kind: 'Dashboard' })).toEqual([]);
  });

  it('a route reached without a principal answers 401, never a 500', () => {
    const req = (url: string) => ({ url, principal: undefined }) as unknown as FastifyRequest;
    expect(() => principalOf(req('/v1/sdk/import'))).toThrow('API key required');
    expect(() => principalOf(req('/v1/api-keys/U2026A00001'))).toThrow('Session required');
  });
});
