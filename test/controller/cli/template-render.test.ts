import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.ts';
import { connectionSet, inputs } from '../kinds/clientset/fixtures.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bi-template-'));
  mkdirSync(join(dir, 'sets'));
  mkdirSync(join(dir, 'catalog'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('bictl template render', () => {
  it('prints the rendered objects as multi-document YAML, with no store', async () => {
    writeFileSync(join(dir, 'catalog/retail.csv'), 'id,displayName\nBETA,Beta Inc\n');
    writeFileSync(join(dir, 'sets/retail.yaml'), stringify(connectionSet('retail', { inputs: inputs('ACME2'), inputsFrom: [{ path: 'catalog/retail.csv' }] })));
    const r = await runCli(['template', 'render', join(dir, 'sets/retail.yaml'), '--root', dir]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const docs = parseAllDocuments(r.out).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec: { name: string } });
    expect(docs.map((d) => [d.kind, d.metadata.name, d.spec.name])).toEqual([
      ['Connection', 'acme2-wh', 'ACME2 Corp warehouse'],
      ['Connection', 'beta-wh', 'Beta Inc warehouse'],
    ]);
  });

  it('without --root, a set outside --manifests reads inputsFrom from the nearest folder upward that holds them', async () => {
    writeFileSync(join(dir, 'catalog/retail.csv'), 'id,displayName\nBETA,Beta Inc\n');
    writeFileSync(join(dir, 'sets/retail.yaml'), stringify(connectionSet('retail', { inputsFrom: [{ path: 'catalog/retail.csv' }] })));
    const r = await runCli(['template', 'render', join(dir, 'sets/retail.yaml')]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(parseAllDocuments(r.out).map((d) => (d.toJS() as { metadata: { name: string } }).metadata.name)).toEqual(['beta-wh']);
  });

  it('a value that is exactly one output keeps its type; values never add keys', async () => {
    const set = connectionSet('typed', { inputs: [{ id: 'A', displayName: '{{ evil }}\nextra: 1', port: 5433 }] });
    const res = (set.spec as { resources: { spec: Record<string, unknown> }[] }).resources[0];
    res.spec = { ...res.spec, vendor: 'POSTGRESQL', host: 'db.example.com', port: '{{ input.port }}', accountUrl: undefined, warehouse: undefined };
    delete res.spec.accountUrl;
    delete res.spec.warehouse;
    writeFileSync(join(dir, 'sets/typed.yaml'), stringify(set));
    const r = await runCli(['template', 'render', join(dir, 'sets/typed.yaml'), '--root', dir]);
    expect(r.err).toBe('');
    const [doc] = parseAllDocuments(r.out).map((d) => d.toJS() as { spec: Record<string, unknown> });
    expect(doc.spec.port).toBe(5433);
    expect(doc.spec.name).toBe('{{ evil }}\nextra: 1 warehouse');
    expect(doc.spec.extra).toBeUndefined();
  });

  it('exits 1 with one line per failing input', async () => {
    writeFileSync(join(dir, 'sets/retail.yaml'), stringify(connectionSet('retail', { inputs: [...inputs('GOOD'), { id: 'BAD' }] })));
    const r = await runCli(['template', 'render', join(dir, 'sets/retail.yaml'), '--root', dir]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'input BAD: spec.resources[0].spec.name: undefined variable: input.displayName, line:1, col:4\n1 problem(s) rendering retail.yaml',
    );
    expect(parseAllDocuments(r.out)).toHaveLength(1);
  });

  it('an inputsFrom path outside the root is refused by the schema', async () => {
    writeFileSync(join(dir, 'sets/retail.yaml'), stringify(connectionSet('retail', { inputsFrom: [{ path: '../etc/passwd.csv' }] })));
    const r = await runCli(['template', 'render', join(dir, 'sets/retail.yaml'), '--root', dir]);
    expect(r.code).toBe(1);
    expect(r.err).toContain('spec.inputsFrom[0].path must be a path relative to the manifests root');
  });
});
