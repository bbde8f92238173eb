import { describe, expect, it } from 'vitest';
import { MAX_MANIFEST_BYTES, parseManifest } from '../../../controller/manifest/loader.ts';
import { SchemaRegistry } from '../../../controller/manifest/validator.ts';
import { testSchemas } from '../../helpers/schemas.ts';

const schemas = testSchemas();

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
    expect(r.problems[0].column).toBeGreaterThanOrEqual(1);
    expect(r.problems[0].message).not.toMatch(/at line/);
  });

  it('accepts an unknown field with a warning naming the nearest known one; a free object (CoreModel definition) is not checked', () => {
    const r = parseManifest('core/retail.yaml', `${coreModel}  descripton: typo\n  definition: {anything: [1, 2]}\n`, schemas);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.warnings).toEqual([{ path: 'spec.descripton', message: 'spec.descripton is an unknown field (did you mean description?)' }]);
    expect(r.manifest.spec.descripton).toBe('typo');
    expect(parseManifest('core/retail.yaml', coreModel, schemas)).toMatchObject({ ok: true, warnings: [] });
  });

  it('refuses an unknown field in strict mode (BI_STRICT_MANIFESTS)', () => {
    const strict = new SchemaRegistry(undefined, { strict: true });
    const r = parseManifest('core/retail.yaml', `${coreModel}  descripton: typo\n`, strict);
    expect(r).toMatchObject({ ok: false, reason: 'schema', problems: [{ path: 'spec.descripton', message: 'spec.descripton is an unknown field (did you mean description?)' }] });
  });

  it('a missing required field names the key that was typed instead', () => {
    const r = parseManifest('core/retail.yaml', coreModel.replace('  name: Retail', '  Name: Retail'), schemas);
    expect(r).toMatchObject({ ok: false, problems: [{ path: 'spec.name', message: 'spec.name is required (found spec.Name: did you mean name?)' }] });
  });

  it('gives the line and column of a JSON syntax error, not a byte offset, and never quotes the text', () => {
    const r = parseManifest('a.json', '{"apiVersion": "bi.controller/v1",\n "kind": "CoreModel",\n "metadata": {"name": "a"},\n "spec": {"name": "A",}\n}', schemas);
    expect(r).toMatchObject({ ok: false, reason: 'parse', problems: [{ path: '', message: 'JSON syntax error: expected a property name in double quotes', line: 4, column: 23 }] });
    expect(parseManifest('b.json', '{"a": ', schemas)).toMatchObject({ ok: false, problems: [{ message: 'JSON syntax error: unexpected end of input', line: 1, column: 7 }] });
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
