import { describe, expect, it } from 'vitest';
import { MAX_MANIFEST_BYTES, parseManifest } from '../../../controller/manifest/loader.ts';
import { SchemaRegistry } from '../../../controller/manifest/validator.ts';

const schemas = new SchemaRegistry();

const coreModel = `apiVersion: bi.controller/v1
kind: CoreModel
metadata:
  name: retail
spec:
  name: Retail
`;

describe('parseManifest', () => {
  it('accepts a valid manifest, keys it Kind/name and applies the schema defaults', () => {
    const r = parseManifest('core/retail.yaml', coreModel, schemas);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.key).toBe('CoreModel/retail');
    expect(r.manifest.spec).toEqual({ name: 'Retail', description: '', definition: {} });
    expect(r.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('reads JSON files too', () => {
    const r = parseManifest('a.json', JSON.stringify({ apiVersion: 'bi.controller/v1', kind: 'CoreModel', metadata: { name: 'a' }, spec: { name: 'A' } }), schemas);
    expect(r.ok).toBe(true);
  });

  it('reports every problem with its field path', () => {
    const r = parseManifest(
      'bad.yaml',
      'apiVersion: bi.controller/v1\nkind: Connection\nmetadata: {name: c}\nspec: {vendor: ORACLE, port: "x", password: hunter2}\n',
      schemas,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems).toEqual([
      { path: 'spec.name', message: 'spec.name is required' },
      { path: 'spec.vendor', message: 'spec.vendor must be one of SNOWFLAKE, POSTGRESQL' },
      { path: 'spec.port', message: 'spec.port must be integer' },
      { path: 'spec.password', message: 'spec.password plain-text secrets are refused: use passwordEnv or secretRef' },
    ]);
    expect(r.kind).toBe('Connection');
    expect(r.name).toBe('c');
  });

  it('refuses an unknown kind and a name that could leave the folder', () => {
    const r = parseManifest('x.yaml', 'apiVersion: bi.controller/v1\nkind: Robot\nmetadata: {name: ../x}\nspec: {}\n', schemas);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems.map((p) => p.path)).toEqual(['kind', 'metadata.name']);
  });

  it('gives the line of a YAML syntax error', () => {
    const r = parseManifest('broken.yaml', 'apiVersion: bi.controller/v1\nkind: [CoreModel\nmetadata: {name: a}\n', schemas);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0].message).toMatch(/^YAML syntax error/);
    expect(r.problems[0].line).toBeGreaterThanOrEqual(2);
  });

  it('refuses a YAML alias bomb without expanding it', () => {
    const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 9; i++) {
      const prev = String.fromCharCode(96 + i);
      const cur = String.fromCharCode(97 + i);
      levels.push(`${cur}: &${cur} [${Array(9).fill(`*${prev}`).join(',')}]`);
    }
    const r = parseManifest('bomb.yaml', `${levels.join('\n')}\n`, schemas);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0].message).toMatch(/alias/i);
  });

  it('refuses content over 1 MiB', () => {
    const r = parseManifest('big.yaml', `${coreModel}# ${'x'.repeat(MAX_MANIFEST_BYTES)}\n`, schemas);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.problems[0].message).toBe(`file is larger than ${MAX_MANIFEST_BYTES} bytes`);
  });

  it('refuses a document that is not an object', () => {
    const r = parseManifest('list.yaml', '- a\n- b\n', schemas);
    expect(r.ok).toBe(false);
  });
});
