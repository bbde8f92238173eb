/**
 * `npm run gen:types`: derives the TypeScript types and the constant lists the code needs from
 * `schemas/*.schema.json` (the one declaration of every shape). A unit test regenerates in
 * memory and fails when a committed file is stale.
 *
 * Types describe a document after validation: a property with a schema `default` is always
 * present (ajv fills it in), conditional keywords (`if`/`then`) and forbidden properties
 * (`not: {}`) are left out, and only the declared fields are typed.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compile, type JSONSchema } from 'json-schema-to-typescript';
import { isPlainObject } from '../controller/objects.ts';
import { ROOT } from '../controller/paths.ts';

type Node = Record<string, unknown>;

export const SCHEMAS_DIR = join(ROOT, 'schemas');
/** Where the generated files go (paths relative to the repository root). */
export const OUTPUTS = {
  types: 'controller/generated/schema-types.ts',
  constants: 'controller/generated/schema-constants.ts',
  ui: 'api/ui/js/schema-constants.js',
} as const;

/**
 * Lists the code uses, each read from one place of one schema: `pointer` is a JSON pointer into
 * `schemas/<schema>.schema.json` (with `defaults`, an object schema: its properties' defaults).
 * A pointer that no longer resolves fails the generation.
 */
export const CONSTANTS: readonly { name: string; schema: string; pointer: string; doc: string; defaults?: true }[] = [
  { name: 'KINDS', schema: 'envelope', pointer: '/properties/kind/enum', doc: 'Manifest kinds (the envelope\'s `kind`).' },
  { name: 'API_VERSION', schema: 'envelope', pointer: '/properties/apiVersion/const', doc: 'The one manifest apiVersion.' },
  { name: 'VENDORS', schema: 'connection', pointer: '/properties/vendor/enum', doc: 'Connection vendors.' },
  {
    name: 'CLIENT_ID_PATTERN',
    schema: 'client',
    pointer: '/properties/clientId/pattern',
    doc: 'A client ID as sent (uppercased before it is stored; the empty string is refused by `minLength`).',
  },
  { name: 'DATA_SOURCE_DEFAULTS', schema: 'dashboard', pointer: '/$defs/dataSource', defaults: true, doc: 'Defaults of a dashboard\'s `dataSource`.' },
  { name: 'LAYOUT_DEFAULTS', schema: 'dashboard', pointer: '/$defs/layout', defaults: true, doc: 'A dashboard\'s `layout` when none is given.' },
  { name: 'IS_PUBLIC_DEFAULT', schema: 'dashboard', pointer: '/properties/isPublic/default', doc: 'A dashboard\'s `isPublic` when none is given.' },
  { name: 'AGGREGATIONS', schema: 'dashboard', pointer: '/$defs/measure/properties/aggregation/enum', doc: 'Measure aggregations.' },
  { name: 'PHASES', schema: 'api', pointer: '/$defs/StatusItem/properties/phase/enum', doc: 'Reconcile phases of a manifest.' },
  { name: 'CLIENT_STATUSES', schema: 'api', pointer: '/$defs/ListedClient/properties/status/enum', doc: 'Client registry statuses (spec 3).' },
];

const pascal = (s: string): string =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0].toUpperCase() + w.slice(1))
    .join('');

/** Every schema of the folder, by stem (`client` for client.schema.json), in name order. */
export function readSchemas(dir: string = SCHEMAS_DIR): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort()) {
    out.set(file.replace(/\.schema\.json$/, ''), JSON.parse(readFileSync(join(dir, file), 'utf8')) as Node);
  }
  return out;
}

/** The value at a JSON pointer; `$ref`s on the way are followed (within the same schema). */
function at(schema: Node, pointer: string, root: Node = schema): unknown {
  let node: unknown = schema;
  for (const raw of pointer.split('/').slice(1)) {
    if (isPlainObject(node) && typeof node.$ref === 'string') node = at(root, node.$ref.replace(/^[^#]*#/, ''), root);
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isPlainObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Node)[seg];
  }
  if (isPlainObject(node) && typeof node.$ref === 'string') node = at(root, node.$ref.replace(/^[^#]*#/, ''), root);
  return node;
}

function constantValue(schemas: Map<string, Node>, c: (typeof CONSTANTS)[number]): unknown {
  const schema = schemas.get(c.schema);
  if (!schema) throw new Error(`gen:types: ${c.name}: no schema ${c.schema}`);
  let value = at(schema, c.pointer);
  if (c.defaults && isPlainObject(value) && isPlainObject(value.properties)) {
    const props = Object.entries(value.properties).filter(([, p]) => isPlainObject(p) && 'default' in p);
    value = props.length ? Object.fromEntries(props.map(([k, p]) => [k, (p as Node).default])) : undefined;
  }
  if (value === undefined || (isPlainObject(value) && !c.defaults)) throw new Error(`gen:types: ${c.name}: ${c.schema}${c.pointer} does not resolve`);
  return value;
}

/**
 * All schemas as one: each file's root and `$defs` become named `$defs` of a wrapper
 * (`Client`, `ClientVdm`, `DashboardChart`, …) and every `$ref` points there, so a definition
 * shared across files (the dashboard chart the client schema uses) is declared once.
 */
export function combine(schemas: Map<string, Node>): JSONSchema {
  const byId = new Map<string, string>();
  for (const [stem, s] of schemas) if (typeof s.$id === 'string') byId.set(s.$id, stem);
  const defs: Record<string, Node> = {};
  const add = (name: string, body: Node) => {
    if (defs[name]) throw new Error(`gen:types: two schemas define the type name ${name}`);
    defs[name] = body;
  };
  for (const [stem, s] of schemas) {
    const { $defs, $schema: _s, $id: _i, ...root } = s;
    const refName = (ref: string): string => {
      const [file, fragment = ''] = ref.split('#');
      const target = file ? (byId.get(file) ?? file.replace(/^.*\//, '').replace(/\.schema\.json$/, '')) : stem;
      if (!schemas.has(target)) throw new Error(`gen:types: ${stem}: unresolvable $ref ${ref}`);
      const def = /^\/\$defs\/([^/]+)$/.exec(fragment);
      if (!def && fragment !== '' && fragment !== '/') throw new Error(`gen:types: ${stem}: unsupported $ref ${ref}`);
      return `#/$defs/${pascal(target)}${def ? pascal(def[1]) : ''}`;
    };
    add(pascal(stem), prepare(root, refName, pascal(stem)));
    for (const [key, body] of Object.entries(($defs ?? {}) as Record<string, Node>)) {
      add(pascal(stem) + pascal(key), prepare(body, refName, pascal(stem) + pascal(key)));
    }
  }
  const stems = [...schemas.keys()];
  return {
    title: 'SchemaFiles',
    description: 'Each schema file by its stem (`client` for schemas/client.schema.json).',
    type: 'object',
    properties: Object.fromEntries(stems.map((s) => [s, { $ref: `#/$defs/${pascal(s)}` }])),
    required: stems,
    additionalProperties: false,
    $defs: defs,
  } as JSONSchema;
}

const DROPPED = new Set(['if', 'then', 'else', 'x-messages', 'x-example', '$schema', '$id', 'examples']);

/** One node made ready for the compiler: refs renamed, defaulted properties required, conditionals dropped. */
function prepare(node: Node, refName: (ref: string) => string, title?: string): Node {
  const out: Node = {};
  for (const [k, v] of Object.entries(node)) {
    if (DROPPED.has(k)) continue;
    if (k === 'required' && isPlainObject(node.properties)) continue; // set with `properties`
    if (k === '$ref' && typeof v === 'string') out.$ref = refName(v);
    else if (k === 'properties' && isPlainObject(v)) {
      const props: Node = {};
      const defaulted: string[] = [];
      for (const [p, sub] of Object.entries(v)) {
        if (isPlainObject(sub) && isPlainObject(sub.not) && Object.keys(sub.not).length === 0) continue; // forbidden
        if (isPlainObject(sub) && 'default' in sub) defaulted.push(p);
        props[p] = isPlainObject(sub) ? prepare(sub, refName) : sub;
      }
      out.properties = props;
      const required = Array.isArray(node.required) ? (node.required as string[]) : [];
      const all = [...required, ...defaulted.filter((p) => !required.includes(p))];
      if (all.length) out.required = all;
    } else if (k === 'allOf' && Array.isArray(v)) {
      const kept = v.map((s) => (isPlainObject(s) ? prepare(s, refName) : s)).filter((s) => !isPlainObject(s) || Object.keys(s).length > 0);
      if (kept.length) out.allOf = kept;
    } else if (Array.isArray(v)) out[k] = v.map((s) => (isPlainObject(s) && k !== 'enum' && k !== 'default' ? prepare(s, refName) : s));
    else if (isPlainObject(v) && k !== 'default' && k !== 'const') out[k] = prepare(v, refName);
    else out[k] = v;
  }
  // A reference with siblings (`{$ref, default}`) would be copied instead of named.
  if (typeof out.$ref === 'string') return title ? { $ref: out.$ref, title } : { $ref: out.$ref };
  // A free object (no declared fields) is a record, not `{}`.
  if (out.type === 'object' && out.properties === undefined && out.additionalProperties === undefined) out.tsType = 'Record<string, unknown>';
  if (title) out.title = title;
  return out;
}

/**
 * Object types as aliases, not interfaces: an alias of an object type is assignable to
 * `Record<string, unknown>` (what the reconciler hands every applier), an interface is not.
 */
function asTypeAliases(source: string): string {
  return source
    .replace(/^export interface (\w+) \{$([\s\S]*?)^\}$/gm, 'export type $1 = {$2};')
    .replace(/^( \*\n)? \* This interface was referenced by `SchemaFiles`'s JSON-Schema\n \* via the `definition` "\w+"\.\n/gm, '')
    .replace(/^\/\*\*\n \*\/\n/gm, '');
}

const BANNER = (what: string) =>
  `// Generated by \`npm run gen:types\` from schemas/*.schema.json: ${what}. Do not edit; change the schema and regenerate.\n`;

/** The three generated files (path → content), from the schemas in `dir`. */
export async function generate(dir: string = SCHEMAS_DIR): Promise<Map<string, string>> {
  const schemas = readSchemas(dir);
  const types = await compile(combine(schemas), 'SchemaFiles', {
    bannerComment: BANNER('the shapes after validation (every defaulted property is present)').trimEnd(),
    additionalProperties: false,
    unreachableDefinitions: true,
    declareExternallyReferenced: true,
    strictIndexSignatures: false,
    ignoreMinAndMaxItems: true,
    unknownAny: true,
    format: true,
    style: { singleQuote: true, printWidth: 140, trailingComma: 'all' },
  });
  if (/^export interface \w+ extends/m.test(types)) throw new Error('gen:types: an interface with extends cannot be turned into a type alias');
  const values = CONSTANTS.map((c) => ({ ...c, value: constantValue(schemas, c) }));
  const literal = (v: unknown) => JSON.stringify(v);
  const ts =
    BANNER('lists and patterns the code reads from the schemas') +
    values.map((c) => `/** ${c.doc} */\nexport const ${c.name} = ${literal(c.value)} as const;\n`).join('');
  const js =
    BANNER('lists and patterns the settings UI reads from the schemas') +
    values.map((c) => `/** ${c.doc} */\nexport const ${c.name} = Object.freeze(${literal(c.value)});\n`).join('');
  return new Map([
    [OUTPUTS.types, asTypeAliases(types)],
    [OUTPUTS.constants, ts],
    [OUTPUTS.ui, js.replace(/Object\.freeze\(("[^"]*"|[^[{][^)]*)\)/g, '$1')],
  ]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const [path, content] of await generate()) {
    writeFileSync(join(ROOT, path), content);
    console.log(`wrote ${path}`);
  }
}
