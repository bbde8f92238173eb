import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../helpers/runtime.ts';

describe('OpenAPI', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(async () => t.close());

  it('publishes the spec paths with bodies taken from schemas/', async () => {
    const res = await t.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    for (const path of ['/v1/sdk/client/onboard', '/v1/sdk/import', '/v1/sdk/import-pipeline', '/v1/sdk/chart-types', '/v1/api-keys/{userId}/{keyId}']) {
      expect(doc.paths[path]).toBeDefined();
    }
    expect(doc.paths['/v1/sdk/import'].post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/DashboardImport' });
    // The component is the schema file itself, minus its annotations: one source of truth.
    expect(doc.components.schemas.OnboardingPackage.required).toEqual(t.rt.schemas.schema('client').required);
    expect(JSON.stringify(doc)).not.toContain('x-messages');
    expect(JSON.stringify(doc)).not.toContain('https://bi.controller/schemas/');
  });

  it('serves a readable docs page without third-party assets', async () => {
    const res = await t.app.inject({ url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('/openapi.json');
    expect(res.body).not.toMatch(/https?:\/\/(?!json-schema)/);
  });
});
