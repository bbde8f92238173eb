import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

function resolve(doc: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .reduce<unknown>((n, seg) => (n && typeof n === 'object' ? (n as Record<string, unknown>)[seg] : undefined), doc);
}

describe('dashboard schema in the OpenAPI document', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await makeTestApp();
  });
  afterEach(async () => t.close());

  it('publishes the chart $defs so every $ref of DashboardImport resolves', async () => {
    const doc = (await t.app.inject({ url: '/openapi.json' })).json();
    const component = doc.components.schemas.DashboardImport;
    const dashboardRefs = refs(component);
    expect(dashboardRefs).toContain('#/components/schemas/DashboardImport/$defs/chart');
    for (const ref of dashboardRefs) expect(resolve(doc, ref), ref).toBeTypeOf('object');
  });
});
