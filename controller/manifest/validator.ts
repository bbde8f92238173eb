import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { KINDS } from '../generated/schema-constants.ts';
import { fieldPath } from '../objects.ts';
import { ROOT } from '../paths.ts';
import type { Manifest, Problem } from '../types.ts';

export const SCHEMAS_DIR = join(ROOT, 'schemas');

/** Kind name (the envelope's `kind` enum) → schema file stem: `CoreModel` → `coremodel`. */
export const KIND_SCHEMAS: Readonly<Record<string, string>> = Object.fromEntries(KINDS.map((k) => [k, k.toLowerCase()]));

type Validated<T> = { ok: true; value: T } | { ok: false; problems: Problem[] };

// ajv-formats ships CJS with a default export; under NodeNext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

/**
 * The one place where the JSON Schemas of `schemas/` are compiled (once) and where their
 * `default`s are applied. The loader, the API and `bictl validate` all go through it.
 */
export class SchemaRegistry {
  readonly #ajv: Ajv2020;
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #schemas = new Map<string, AnySchemaObject>();

  constructor(dir: string = SCHEMAS_DIR) {
    this.#ajv = new Ajv2020({ allErrors: true, useDefaults: true, verbose: true, strict: true, allowUnionTypes: true });
    addFormats(this.#ajv);
    // Annotation keywords: custom messages per failing keyword, and OpenAPI-only hints.
    this.#ajv.addKeyword({ keyword: 'x-messages', schemaType: 'object' });
    this.#ajv.addKeyword({ keyword: 'x-example', schemaType: ['object', 'array', 'string', 'number', 'boolean'] });
    const files = readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort();
    for (const file of files) {
      const schema = JSON.parse(readFileSync(join(dir, file), 'utf8')) as AnySchemaObject;
      this.#ajv.addSchema(schema);
      this.#schemas.set(file.replace(/\.schema\.json$/, ''), schema);
    }
    for (const stem of this.#schemas.keys()) {
      const id = this.#schemas.get(stem)?.$id;
      if (typeof id === 'string') this.#validators.set(stem, this.#ajv.getSchema(id) as ValidateFunction);
    }
  }

  /** Stems of the loaded schemas, e.g. `client`, `envelope`. */
  names(): string[] {
    return [...this.#schemas.keys()];
  }

  schema(stem: string): AnySchemaObject {
    const s = this.#schemas.get(stem);
    if (!s) throw new Error(`unknown schema ${stem}`);
    return s;
  }

  /**
   * Validates `data` (in place: defaults are filled in) against schema `stem`. Problem paths
   * are written `a.b[0].c`, prefixed with `prefix` when given (`spec` for manifest files).
   */
  validate<T>(stem: string, data: unknown, prefix = ''): Validated<T> {
    const validate = this.#validators.get(stem);
    if (!validate) throw new Error(`unknown schema ${stem}`);
    if (validate(data)) return { ok: true, value: data as T };
    return { ok: false, problems: formatAjvErrors(validate.errors ?? [], prefix) };
  }

  /** Envelope, then the kind's spec. The manifest's spec gets its defaults. */
  validateManifest(doc: unknown): Validated<Manifest> {
    const envelope = this.validate<Manifest>('envelope', doc);
    if (!envelope.ok) return envelope;
    const stem = KIND_SCHEMAS[envelope.value.kind];
    const spec = this.validate<Record<string, unknown>>(stem, envelope.value.spec, 'spec');
    if (!spec.ok) return spec;
    return envelope;
  }
}

/** `/vdm/0/securityEnabled` → `vdm[0].securityEnabled`. */
export function toFieldPath(pointer: string, prefix = ''): string {
  let out = prefix;
  for (const raw of pointer.split('/').slice(1)) {
    const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(seg)) out += `[${seg}]`;
    else out += out ? `.${seg}` : seg;
  }
  return out;
}

/** ajv errors → one problem per field, with the schema's own `x-messages` where given. */
export function formatAjvErrors(errors: ErrorObject[], prefix = ''): Problem[] {
  const out = new Map<string, Problem>();
  for (const e of errors) {
    // anyOf/oneOf/if summaries repeat what their branches already said.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const problem = toProblem(e, prefix);
    out.set(`${problem.path}|${problem.message}`, problem);
  }
  return [...out.values()];
}

function toProblem(e: ErrorObject, prefix: string): Problem {
  const path = toFieldPath(e.instancePath, prefix);
  const messages = (e.parentSchema as { 'x-messages'?: Record<string, string> } | undefined)?.['x-messages'];
  if (e.keyword === 'required') {
    // A missing property's own message is keyed `required:<property>` in `x-messages`.
    const missing = String((e.params as { missingProperty: string }).missingProperty);
    const field = fieldPath(path, missing);
    return { path: field, message: messages?.[`required:${missing}`] ?? `${field} is required` };
  }
  const custom = messages?.[e.keyword];
  // A message that starts with a capital is a whole sentence; otherwise it follows the path.
  if (custom && /^[A-Z]/.test(custom)) return { path, message: custom };
  return { path, message: `${path || 'body'} ${custom ?? describe(e)}` };
}

function describe(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      return `must be ${String(p.type).replace(',', ' or ')}`;
    case 'enum':
      return `must be one of ${(p.allowedValues as unknown[]).map(String).join(', ')}`;
    case 'const':
      return `must be ${String(p.allowedValue)}`;
    case 'additionalProperties':
      return `has an unknown field ${String(p.additionalProperty)}`;
    default:
      return e.message ?? `is invalid (${e.keyword})`;
  }
}
