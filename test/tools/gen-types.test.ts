import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../controller/paths.ts';
import { generate, OUTPUTS, SCHEMAS_DIR } from '../../tools/gen-types.ts';
import * as constants from '../../controller/generated/schema-constants.ts';
import { KIND_SCHEMAS, SchemaRegistry } from '../../controller/manifest/validator.ts';
import { AGGREGATIONS } from '../../controller/kinds/dashboard/catalogue.ts';
import { ID_PREFIXES } from '../../controller/store/ids.ts';

const tmp = mkdtempSync(join(tmpdir(), 'bi-gen-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('gen:types', () => {
  it('the committed files are what the schemas generate (run `npm run gen:types` after changing a schema)', async () => {
    const generated = await generate();
    expect([...generated.keys()].sort()).toEqual(Object.values(OUTPUTS).sort());
    for (const [path, content] of generated) expect(readFileSync(join(ROOT, path), 'utf8'), path).toBe(content);
  });

  it('a schema change changes the types: a new field, a default making a field present', async () => {
    const dir = join(tmp, 'schemas');
    cpSync(SCHEMAS_DIR, dir, { recursive: true });
    const file = join(dir, 'coremodel.schema.json');
    const schema = JSON.parse(readFileSync(file, 'utf8'));
    schema.properties.owner = { type: 'string' };
    schema.properties.modelId.default = 'SM2026A00001';
    writeFileSync(file, JSON.stringify(schema));
    const types = (await generate(dir)).get(OUTPUTS.types) ?? '';
    expect(types).toMatch(/export type Coremodel = \{\n\s+modelId: string;[\s\S]*owner\?: string;/);
  });

  it('every schema of the folder gets a type, and cross-file refs are declared once', async () => {
    const types = (await generate()).get(OUTPUTS.types) ?? '';
    for (const stem of new SchemaRegistry().names()) expect(types).toContain(`  ${stem}: `);
    expect(types.match(/^export type DashboardChart = /gm)).toHaveLength(1);
    expect(types).toMatch(/charts: DashboardChart\[\];/);
  });
});

describe('lists read from the schemas', () => {
  const schemas = new SchemaRegistry();
  const enumAt = (stem: string, ...path: string[]): unknown => path.reduce<unknown>((n, k) => (n as Record<string, unknown>)[k], schemas.schema(stem));

  it('kinds: the envelope enum, each with its schema file', () => {
    expect(constants.KINDS).toEqual(enumAt('envelope', 'properties', 'kind', 'enum'));
    expect(Object.keys(KIND_SCHEMAS)).toEqual([...constants.KINDS]);
    for (const stem of Object.values(KIND_SCHEMAS)) expect(schemas.names()).toContain(stem);
  });

  it('vendors, client ID pattern and aggregations', () => {
    expect(constants.VENDORS).toEqual(enumAt('connection', 'properties', 'vendor', 'enum'));
    expect(constants.CLIENT_ID_PATTERN).toBe(enumAt('client', 'properties', 'clientId', 'pattern'));
    expect(Object.keys(AGGREGATIONS)).toEqual([...constants.AGGREGATIONS]);
  });

  it('ID patterns of the schemas are the shapes the ID allocator issues', () => {
    const shape = (prefix: string) => `^${prefix}\\d{4}A\\d{5}$`;
    expect(enumAt('connection', 'properties', 'connectionId', 'pattern')).toBe(shape(ID_PREFIXES.connection));
    expect(enumAt('coremodel', 'properties', 'modelId', 'pattern')).toBe(shape(ID_PREFIXES.semanticModel));
    const issued = { connectionId: 'D2026A00042', coreModelId: 'SM2026A00042' } as const;
    for (const [field, id] of Object.entries(issued)) {
      const re = new RegExp(String(enumAt('client', 'properties', field, 'pattern')));
      expect(re.test(id), field).toBe(true);
      expect(re.test(`X${id}`), field).toBe(false);
    }
  });

  it('the settings UI imports the same lists and copies none', async () => {
    const ui = (await import(pathToFileURL(join(ROOT, OUTPUTS.ui)).href)) as Record<string, unknown>;
    expect({ ...ui }).toEqual({ ...constants });
    const pages = ['api/ui/js/pages/wizard.js', 'api/ui/js/pages/import.js'].map((p) => readFileSync(join(ROOT, p), 'utf8'));
    for (const page of pages) {
      expect(page).not.toMatch(/\[A-Z0-9\]\[A-Z0-9_-\]/);
      expect(page).not.toMatch(/\['POSTGRESQL', 'SNOWFLAKE'\]|\['SNOWFLAKE', 'POSTGRESQL'\]/);
    }
  });
});
