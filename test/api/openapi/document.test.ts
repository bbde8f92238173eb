import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../../controller/paths.ts';
import { ResponseChecker } from '../../helpers/openapi.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';

type Json = Record<string, unknown>;
interface Op {
  operationId?: string;
  security?: Json[];
  requestBody?: { required?: boolean; content: Record<string, { schema: Json }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: Json }> }>;
}
interface Doc {
  paths: Record<string, Record<string, Op>>;
  components: { schemas: Record<string, Json> };
}

function resolve(doc: unknown, ref: string): unknown {
  return ref
    .slice(2)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce<unknown>((n, seg) => (n && typeof n === 'object' ? (n as Json)[seg] : undefined), doc);
}

/**
 * The payload schemas of `schemas/` (one component per file): responses that echo a payload (the
 * export, a stored dashboard's chart parts) refer to them as they are, and the spec leaves some of
 * their item shapes open ("not shown", docs/contract/api.md §2.2).
 */
const PAYLOAD = /^#\/components\/schemas\/(OnboardingPackage|DashboardImport|PipelineImport|ConnectionSpec|CoreModelSpec|Manifest)(\/|$)/;

/** Every subschema of `schema`, following refs into the document once each (not into the payload schemas). */
function* walk(doc: Doc, schema: unknown, seen = new Set<unknown>()): Generator<Json> {
  if (!schema || typeof schema !== 'object' || seen.has(schema)) return;
  seen.add(schema);
  if (Array.isArray(schema)) {
    for (const s of schema) yield* walk(doc, s, seen);
    return;
  }
  const s = schema as Json;
  yield s;
  if (typeof s.$ref === 'string' && !PAYLOAD.test(s.$ref)) yield* walk(doc, resolve(doc, s.$ref), seen);
  for (const [k, v] of Object.entries(s)) {
    if (k === 'properties' || k === '$defs' || k === 'patternProperties') for (const p of Object.values(v as Json)) yield* walk(doc, p, seen);
    else if (typeof v === 'object') yield* walk(doc, v, seen);
  }
}

const operations = (doc: Doc) =>
  Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ name: `${method.toUpperCase()} ${path}`, method, op })));

describe('the served OpenAPI document', () => {
  let t: TestApp;
  let doc: Doc;
  let text: string;
  beforeAll(async () => {
    t = await makeTestApp();
    text = (await t.app.inject({ url: '/openapi.json' })).body;
    doc = JSON.parse(text) as Doc;
  });
  afterAll(async () => t.close());

  it('is a valid OpenAPI 3.1 document (@readme/openapi-parser)', async () => {
    const result = await validate(structuredClone(doc) as never);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it('passes `redocly lint` with zero errors (redocly.yaml)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bi-openapi-'));
    try {
      const file = join(dir, 'openapi.json');
      writeFileSync(file, text);
      const cli = join(ROOT, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js');
      const run = spawnSync(process.execPath, [cli, 'lint', file, '--format=json', `--config=${join(ROOT, 'redocly.yaml')}`], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
      });
      const report = JSON.parse(run.stdout) as { totals: { errors: number }; problems: { ruleId: string; severity: string; message: string }[] };
      expect(report.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(report.totals.errors).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('resolves every $ref, the local refs of the pipeline schema included', () => {
    const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
    expect(refs).toContain('#/components/schemas/PipelineImport/$defs/source');
    for (const ref of refs) {
      expect(ref, ref).toMatch(/^#\/components\/schemas\//);
      expect(resolve(doc, ref), ref).toBeTypeOf('object');
    }
  });

  it('describes every JSON response body: no bare object, required fields named', () => {
    for (const { name, op } of operations(doc)) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect(response.content, `${name} ${status}`).toBeDefined();
        for (const [type, media] of Object.entries(response.content ?? {})) {
          if (type !== 'application/json') continue;
          for (const s of walk(doc, media.schema)) {
            if (s.type !== 'object' && !(Array.isArray(s.type) && s.type.includes('object'))) continue;
            const where = `${name} ${status}: ${JSON.stringify(s).slice(0, 120)}`;
            expect(s.properties !== undefined || s.additionalProperties !== undefined, where).toBe(true);
            if (s.properties && s.additionalProperties === false) expect(s.required, where).toBeDefined();
          }
        }
      }
    }
  });

  it("lists the failures of each route's guard, its body and the server, and names each operation once", () => {
    const ids = new Set<string>();
    for (const { name, method, op } of operations(doc)) {
      const statuses = Object.keys(op.responses);
      const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
      if (schemes.includes('apiKey')) expect(statuses, name).toEqual(expect.arrayContaining(['401', '429']));
      if (schemes.includes('session')) expect(statuses, name).toEqual(expect.arrayContaining(['401', '403']));
      if (method === 'post' || method === 'patch') expect(statuses, name).toEqual(expect.arrayContaining(name.endsWith('/webhook') ? ['413'] : ['400', '413', '415']));
      expect(statuses, name).toContain('500');
      expect(op.operationId, name).toBeTypeOf('string');
      expect(ids.has(op.operationId as string), name).toBe(false);
      ids.add(op.operationId as string);
    }
  });

  it('publishes every body of schemas/api.schema.json as a component of its own', () => {
    const api = JSON.parse(readFileSync(join(ROOT, 'schemas', 'api.schema.json'), 'utf8')) as { $defs: Record<string, Json> };
    for (const name of Object.keys(api.$defs)) expect(doc.components.schemas[name], name).toBeTypeOf('object');
    expect(doc.paths['/v1/auth/login'].post.requestBody?.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/LoginRequest' });
    expect(doc.paths['/v1/reconciler/sync'].post.requestBody?.required).toBe(false);
  });

  it('the response check of the HTTP tests refuses an undocumented status, media type or body', () => {
    const checker = new ResponseChecker(doc as never);
    const json = { 'content-type': 'application/json; charset=utf-8' };
    expect(checker.problem('GET', '/healthz', { statusCode: 200, headers: json, body: '{"status":"ok"}' })).toBeUndefined();
    expect(checker.problem('GET', '/healthz', { statusCode: 418, headers: json, body: '{}' })).toMatch(/a status the OpenAPI document does not list/);
    expect(checker.problem('GET', '/healthz', { statusCode: 200, headers: json, body: '{"status":"up"}' })).toMatch(/does not match the document/);
    expect(checker.problem('GET', '/healthz', { statusCode: 200, headers: { 'content-type': 'text/plain' }, body: 'ok' })).toMatch(/as text\/plain/);
    expect(checker.pathOf('/v1/bi/admin/clients/ACME/export/U2026A00001?x=1')).toBe('/v1/bi/admin/clients/{clientId}/export/{userId}');
    expect(checker.pathOf('/v1/bi/admin/clients/U2026A00001')).toBe('/v1/bi/admin/clients/{userId}');
    // Not part of the document: not checked.
    expect(checker.problem('GET', '/ui/app.js', { statusCode: 200, headers: {}, body: '' })).toBeUndefined();
  });
});
