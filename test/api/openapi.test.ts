import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EDGE_KEYWORDS } from '../../api/validation.ts';
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
    // What only the edge's validator reads (api/validation.ts) is no part of the document either.
    for (const keyword of EDGE_KEYWORDS) expect(JSON.stringify(doc)).not.toContain(keyword);
    expect(JSON.stringify(doc)).not.toContain('https://bi.controller/schemas/');
  });

  it('documents every route the app serves, and nothing it does not', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`)),
    );
    // Not part of the API: the UI's pages and assets, the docs themselves.
    const served = t.app.registeredRoutes
      .filter((r) => !/^\/(ui|docs|openapi\.json|$)/.test(r.url) && r.url !== '/')
      .map((r) => `${r.method} ${r.url}`);
    expect(served.filter((r) => !documented.has(r))).toEqual([]);
    expect([...documented].filter((d) => !served.includes(d))).toEqual([]);
  });

  it('serves a readable docs page without third-party assets', async () => {
    const res = await t.app.inject({ url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('/openapi.json');
    expect(res.body).not.toMatch(/https?:\/\/(?!json-schema)/);
  });
});
