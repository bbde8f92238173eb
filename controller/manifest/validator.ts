import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type AnySchemaObject, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { parseIsoDate } from '../dates.ts';
import { KINDS } from '../generated/schema-constants.ts';
import { fieldPath } from '../objects.ts';
import { ROOT } from '../paths.ts';
import type { Manifest, Problem } from '../types.ts';
import { closeSchema, typedInstead, unknownFieldProblems } from './unknown-fields.ts';

export const SCHEMAS_DIR = join(ROOT, 'schemas');

/** Kind name (the envelope's `kind` enum) → schema file stem: `CoreModel` → `coremodel`. */
export const KIND_SCHEMAS: Readonly<Record<string, string>> = Object.fromEntries(KINDS.map((k) => [k, k.toLowerCase()]));

/** `warnings`: unknown fields (present only when there are some; errors instead in strict mode). */
type Validated<T> = { ok: true; value: T; warnings?: Problem[] } | { ok: false; problems: Problem[] };

export interface SchemaRegistryOptions {
  /** BI_STRICT_MANIFESTS / `--strict`: an unknown field is an error, not a warning. */
  strict?: boolean;
}

// ajv-formats ships CJS with a default export; under NodeNext it arrives as the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void;

/**
 * The one place where the JSON Schemas of `schemas/` are compiled (once) and where their
 * `default`s are applied. The loader, the API and `bictl validate` all go through it.
 */
export class SchemaRegistry {
  /** Stops at the first error: one cheap pass that also fills in the defaults of valid data. */
  readonly #firstError = new Map<string, ValidateFunction>();
  /** Lists every error; run only on invalid data, over a bounded copy of it. */
  readonly #allErrors = new Map<string, ValidateFunction>();
  readonly #schemas = new Map<string, AnySchemaObject>();
  /** The schemas as compiled (references inlined), for the array caps checked ahead of ajv. */
  readonly #inlined = new Map<string, AnySchemaObject>();
  /** The schemas with every closed object marked (see unknown-fields.ts); compiled on first use. */
  readonly #closedFirst: Ajv2020;
  readonly #closedAll: Ajv2020;
  readonly strict: boolean;

  constructor(dir: string = SCHEMAS_DIR, opts: SchemaRegistryOptions = {}) {
    this.strict = opts.strict === true;
    for (const [stem, schema] of readSchemaFiles(dir)) this.#schemas.set(stem, schema);
    // Compiled with every $ref inlined: ajv joins the errors of a referenced schema with
    // `concat`, once per array item, which made validating n failing items cost O(n²)
    // (20,000 empty charts took 3 s). Inlined, the cost is linear in the body.
    const byId = new Map([...this.#schemas.values()].map((schema) => [String(schema.$id), schema]));
    for (const [stem, schema] of this.#schemas) this.#inlined.set(stem, inlineRefs(schema, byId));
    for (const [allErrors, validators] of [[false, this.#firstError], [true, this.#allErrors]] as const) {
      // Annotation keywords (newAjv): custom messages per failing keyword, and OpenAPI-only hints.
      const ajv = newAjv({ allErrors, useDefaults: true });
      for (const inlined of this.#inlined.values()) ajv.addSchema(inlined);
      for (const [stem, inlined] of this.#inlined) {
        if (typeof inlined.$id === 'string') validators.set(stem, ajv.getSchema(inlined.$id) as ValidateFunction);
      }
    }
    // Both closed passes fill in nothing: the first stops at the first unknown key.
    this.#closedFirst = newAjv({ allErrors: false, useDefaults: false });
    this.#closedAll = newAjv({ allErrors: true, useDefaults: false });
    for (const inlined of this.#inlined.values()) {
      const closed = closeSchema(inlined);
      this.#closedFirst.addSchema(closed);
      this.#closedAll.addSchema(structuredClone(closed));
    }
  }

  #closed(ajv: Ajv2020, stem: string): ValidateFunction {
    const id = this.#inlined.get(stem)?.$id;
    const fn = typeof id === 'string' ? ajv.getSchema(id) : undefined;
    if (!fn) throw new Error(`unknown schema ${stem}`);
    return fn;
  }

  /**
   * The keys of `data` the schema `stem` does not name, where it names them (see
   * unknown-fields.ts), each with the nearest known name. `data` is not changed.
   */
  unknownFields(stem: string, data: unknown, prefix = ''): Problem[] {
    // Listed from a copy bounded in size, like the errors: 9,000 unknown keys in a 1 MiB body
    // cost 800 ms to list whole. The first one is always found (the first-error pass stops at it).
    const listAll = this.#closed(this.#closedAll, stem);
    const toPath = (pointer: string) => toFieldPath(pointer, prefix);
    if (listAll(boundedCopy(data, LISTED_NODES))) {
      const first = this.#closed(this.#closedFirst, stem);
      return first(data) ? [] : unknownFieldProblems(first.errors ?? [], toPath);
    }
    return unknownFieldProblems(listAll.errors ?? [], toPath);
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
    const validate = this.#firstError.get(stem);
    const listAll = this.#allErrors.get(stem);
    if (!validate || !listAll) throw new Error(`unknown schema ${stem}`);
    // An array past its cap is refused before ajv looks at its items: validating 300,000
    // items to report that there are too many would cost seconds.
    const capped = overCap(this.#inlined.get(stem) as AnySchemaObject, data, prefix);
    if (capped.length) return { ok: false, problems: capped };
    if (validate(data)) {
      // The closed schema runs after the defaults are in (cheaper by half than filling them in under it).
      if (this.#closed(this.#closedFirst, stem)(data)) return { ok: true, value: data as T };
      const unknown = this.unknownFields(stem, data, prefix);
      if (unknown.length === 0) return { ok: true, value: data as T };
      return this.strict ? { ok: false, problems: unknown } : { ok: true, value: data as T, warnings: unknown };
    }
    // Invalid: every error is listed, from a copy bounded in size, so a body of 500,000 bad
    // items costs no more than one of 20,000. The first error is always among them.
    const first = validate.errors ?? [];
    listAll(boundedCopy(data, LISTED_NODES));
    const problems = formatAjvErrors(listAll.errors ?? [], prefix);
    for (const p of formatAjvErrors(first, prefix)) if (!problems.some((q) => q.path === p.path && q.message === p.message)) problems.unshift(p);
    if (this.strict && problems.length < MAX_PROBLEMS) problems.push(...this.unknownFields(stem, data, prefix));
    return { ok: false, problems };
  }

  /** Envelope, then the kind's spec. The manifest's spec gets its defaults. */
  validateManifest(doc: unknown): Validated<Manifest> {
    const envelope = this.validate<Manifest>('envelope', doc);
    if (!envelope.ok) return envelope;
    const stem = KIND_SCHEMAS[envelope.value.kind];
    const spec = this.validate<Record<string, unknown>>(stem, envelope.value.spec, 'spec');
    if (!spec.ok) return spec;
    const warnings = [...(envelope.warnings ?? []), ...(spec.warnings ?? [])];
    return warnings.length ? { ok: true, value: envelope.value, warnings } : { ok: true, value: envelope.value };
  }
}

/** The JSON Schemas of a folder (`<stem>.schema.json`), by stem, in name order. */
export function readSchemaFiles(dir: string = SCHEMAS_DIR): Map<string, AnySchemaObject> {
  const out = new Map<string, AnySchemaObject>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.schema.json')).sort()) {
    out.set(file.replace(/\.schema\.json$/, ''), JSON.parse(readFileSync(join(dir, file), 'utf8')) as AnySchemaObject);
  }
  return out;
}

export function newAjv(opts: { allErrors: boolean; useDefaults: boolean }): Ajv2020 {
  const ajv = new Ajv2020({ ...opts, verbose: true, strict: true, allowUnionTypes: true });
  addFormats(ajv);
  // A date, or a date-time with or without a zone, every field in range (controller/dates.ts).
  ajv.addFormat('iso-date-time', (text: string) => parseIsoDate(text) !== undefined);
  ajv.addKeyword({ keyword: 'x-messages', schemaType: 'object' });
  // A request body read as `{}` when it is not a JSON object (api/validation.ts).
  ajv.addKeyword({ keyword: 'x-non-object', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-example', schemaType: ['object', 'array', 'string', 'number', 'boolean'] });
  return ajv;
}

/**
 * A copy of `schema` with each `$ref` (to `#/...` or `<$id>#/...` of a known schema) replaced by
 * a copy of its target, recursively; a reference that would recurse stays a `$ref`.
 */
export function inlineRefs(schema: AnySchemaObject, byId: Map<string, AnySchemaObject>): AnySchemaObject {
  const resolve = (ref: string, base: AnySchemaObject): { target: unknown; root: AnySchemaObject } | undefined => {
    const [uri, pointer = ''] = ref.split('#');
    const root = uri ? byId.get(uri) : base;
    if (!root) return undefined;
    let target: unknown = root;
    for (const raw of pointer.split('/').slice(1)) {
      const seg = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
      target = target && typeof target === 'object' ? (target as Record<string, unknown>)[seg] : undefined;
    }
    return target === undefined ? undefined : { target, root };
  };
  const walk = (node: unknown, root: AnySchemaObject, seen: readonly string[]): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, root, seen));
    if (!node || typeof node !== 'object') return node;
    const obj = node as Record<string, unknown>;
    const ref = typeof obj.$ref === 'string' ? obj.$ref : undefined;
    const key = ref && (ref.startsWith('#') ? `${String(root.$id)}${ref}` : ref);
    const found = ref && key && !seen.includes(key) ? resolve(ref, root) : undefined;
    const out: Record<string, unknown> = {};
    if (found && key) {
      const inlined = walk(found.target, found.root, [...seen, key]) as Record<string, unknown>;
      Object.assign(out, inlined);
      delete out.$id;
      delete out.$schema;
    }
    for (const [k, v] of Object.entries(obj)) {
      if (found && k === '$ref') continue;
      // Keywords next to the $ref (description, default, x-messages) win over the target's.
      out[k] = walk(v, root, seen);
    }
    return out;
  };
  return walk(schema, schema, []) as AnySchemaObject;
}

/** A `maxItems` this large is a size cap (charts, sections, steps…), not a shape rule (a pair of colours). */
const SIZE_CAP = 50;

/**
 * Arrays longer than their size cap (`maxItems`), found by walking `properties` and `items`
 * (arrays within their cap are walked into; one over it is reported and not). Linear in the
 * data, with no error objects built for the items.
 */
export function overCap(schema: AnySchemaObject, data: unknown, prefix = ''): Problem[] {
  const problems: Problem[] = [];
  const walk = (sch: unknown, value: unknown, path: string) => {
    if (!sch || typeof sch !== 'object' || value === null || typeof value !== 'object') return;
    const node = sch as { maxItems?: number; items?: unknown; properties?: Record<string, unknown>; 'x-messages'?: Record<string, string> };
    if (Array.isArray(value)) {
      if (typeof node.maxItems === 'number' && node.maxItems >= SIZE_CAP && value.length > node.maxItems) {
        const custom = node['x-messages']?.maxItems;
        problems.push({ path, message: `${path || 'body'} ${custom ?? `must hold at most ${node.maxItems} items`} (it holds ${value.length})` });
        return;
      }
      if (node.items && typeof node.items === 'object') value.forEach((item, i) => walk(node.items, item, `${path}[${i}]`));
      return;
    }
    const props = node.properties;
    if (!props) return;
    for (const [key, child] of Object.entries(value)) {
      if (child !== null && typeof child === 'object' && Object.hasOwn(props, key)) walk(props[key], child, path ? `${path}.${key}` : key);
    }
  };
  walk(schema, data, prefix);
  return problems;
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

/** Values of an invalid body looked at to list its errors (see `boundedCopy`). */
export const LISTED_NODES = 5_000;

/**
 * A deep copy of `data` that holds at most about `budget` values: once the budget is spent,
 * arrays keep only their first item (objects keep their properties, so no `required` error is
 * invented; no schema here asks for more than one item).
 */
export function boundedCopy(data: unknown, budget: number): unknown {
  let left = budget;
  const copy = (v: unknown): unknown => {
    left -= 1;
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      const out: unknown[] = [];
      for (const item of v) {
        if (left <= 0 && out.length >= 1) break;
        out.push(copy(item));
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const [k, child] of Object.entries(v)) out[k] = copy(child);
    return out;
  };
  return copy(data);
}

/** Problems listed in one answer; a body with thousands of bad items gets the first ones and a count. */
export const MAX_PROBLEMS = 100;

/**
 * ajv errors → one problem per field, with the schema's own `x-messages` where given. A missing
 * field names a near-miss key the data has instead (`did you mean`), unless `didYouMean` is false.
 */
export function formatAjvErrors(errors: ErrorObject[], prefix = '', didYouMean = true): Problem[] {
  const out = new Map<string, Problem>();
  for (const e of errors) {
    if (out.size >= MAX_PROBLEMS) {
      const more = errors.length - errors.indexOf(e);
      out.set('…', { path: '', message: `and ${more} more problem${more === 1 ? '' : 's'} (the first ${MAX_PROBLEMS} are listed)` });
      break;
    }
    // anyOf/oneOf/if summaries repeat what their branches already said.
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    const problem = toProblem(e, prefix, didYouMean);
    out.set(`${problem.path}|${problem.message}`, problem);
  }
  return [...out.values()];
}

function toProblem(e: ErrorObject, prefix: string, didYouMean: boolean): Problem {
  const path = toFieldPath(e.instancePath, prefix);
  const messages = (e.parentSchema as { 'x-messages'?: Record<string, string> } | undefined)?.['x-messages'];
  if (e.keyword === 'required') {
    // A missing property's own message is keyed `required:<property>` in `x-messages`.
    const missing = String((e.params as { missingProperty: string }).missingProperty);
    const field = fieldPath(path, missing);
    const typed = didYouMean ? typedInstead(missing, e.data) : undefined;
    const hint = typed ? ` (found ${fieldPath(path, typed)}: did you mean ${missing}?)` : '';
    return { path: field, message: `${messages?.[`required:${missing}`] ?? `${field} is required`}${hint}` };
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
