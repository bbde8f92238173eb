import { cpSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../../controller/paths.ts';
import { createUserWithKey } from '../../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { testSchemas } from '../../helpers/schemas.ts';

const EXAMPLE = join(ROOT, 'schemas', 'examples', 'onboarding-package.json');

/** The README's curl flow posts schemas/examples/onboarding-package.json: it must work as written. */
describe('the shipped onboarding package example', () => {
  let t: TestApp | undefined;
  afterEach(async () => t?.close());

  it('is valid against schemas/client.schema.json', () => {
    expect(testSchemas().validate('client', JSON.parse(readFileSync(EXAMPLE, 'utf8')))).toMatchObject({ ok: true });
  });

  it('onboards a client (201 COMPLETED) next to the example manifests of manifests/', async () => {
    const app = (t = await makeTestApp());
    cpSync(join(ROOT, 'manifests'), app.manifests, { recursive: true });
    // A copy of the example client left in the checkout by a tried quick start is not one of the shipped examples.
    rmSync(join(app.manifests, 'clients', 'GLOBEX.yaml'), { force: true });
    const report = await app.sync();
    expect(report.failed).toEqual([]);
    const key = await createUserWithKey(app, { role: 'admin' });
    const res = await app.app.inject({ method: 'POST', url: '/v1/sdk/client/onboard', headers: { ...key.headers, 'content-type': 'application/json' }, payload: readFileSync(EXAMPLE, 'utf8') });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ success: true, status: 'COMPLETED', client: { clientId: 'GLOBEX', status: 'ACTIVE' } });
  });
});
