import type { FastifySchemaCompiler } from 'fastify';
import type { AnySchemaObject, ValidateFunction } from 'ajv/dist/2020.js';
import { ValidationError, formatProblem } from '../controller/errors.ts';
import { formatAjvErrors, inlineRefs, newAjv, readSchemaFiles, toFieldPath } from '../controller/manifest/validator.ts';
import type { Problem } from '../controller/types.ts';

type Json = Record<string, unknown>;
type Messages = Record<string, string>;

/**
 * A route schema part (a body, a query string) its handler checks itself, so the edge does not:
 * the manifest bodies (the SchemaRegistry fills in defaults, warns of unknown fields, locates
 * lines), the webhook's raw bytes, and bodies whose every failure depends on the path or on the
 * route's state (a purge's `confirm`, a worker's report outside queue mode). Dropped from the
 * OpenAPI document.
 */
export const CHECKED_BY_HANDLER = 'x-checked-by-handler';

/**
 * Keywords of a query parameter's schema the edge reads before ajv, dropped from the document:
 * `x-empty: 'invalid'` — an empty value (`?page=`) is a value, refused by the schema, not an
 * absent one; `x-uppercase: true` — the value is compared uppercased (`?status=active`). Of a
 * query string's: `x-bare-paths: true` — its problems are named by the parameter alone (`status`,
 * not `query.status`), as the hand-written checks of the spec's own queries named them. And of a
 * body's: `x-non-object: 'empty'` — a body that is not a JSON object (or none) reads as `{}`.
 */
export const EDGE_KEYWORDS = [CHECKED_BY_HANDLER, 'x-empty', 'x-uppercase', 'x-bare-paths', 'x-non-object'] as const;

/** Where a part's problems are: `query.limit`, `params.runId`; a body's are at their path in it (`label`). */
const PREFIX: Record<string, string> = { querystring: 'query.', params: 'params.', body: '' };

/** One Ajv for every route (the SchemaRegistry's options: verbose errors, `x-messages`, formats). */
const ajv = newAjv({ allErrors: true, useDefaults: true });
ajv.addKeyword({ keyword: 'x-empty', schemaType: 'string' });
ajv.addKeyword({ keyword: 'x-uppercase', schemaType: 'boolean' });
ajv.addKeyword({ keyword: 'x-bare-paths', schemaType: 'boolean' });
/** Compiled validators by the text of their schema: routes share most parts (`{userId}`, `?dryRun`). */
const compiled = new Map<string, { fn: ValidateFunction; root: Json }>();

/** Bodies that may be left out (`route({bodyOptional})`): no body (or JSON `null`) passes. */
const OPTIONAL_BODIES = new WeakSet<object>();

/** A route's body schema that may be left out: the edge lets an absent body through to the handler. */
export function optionalBody(schema: Json): Json {
  const copy = { ...schema };
  OPTIONAL_BODIES.add(copy);
  return copy;
}

let schemasById: Map<string, AnySchemaObject> | undefined;

/** The schemas of `schemas/` by `$id`, read once: a body schema is `{$ref}` to one of their `$defs`. */
function byId(): Map<string, AnySchemaObject> {
  if (!schemasById) {
    schemasById = new Map([...readSchemaFiles().values()].map((schema) => [String(schema.$id), schema]));
  }
  return schemasById;
}

const messagesOf = (s: unknown): Messages | undefined => (s && typeof s === 'object' ? ((s as Json)['x-messages'] as Messages | undefined) : undefined);

/**
 * A query string as its schema types it, before validation: an empty value (`?limit=`) is absent
 * (unless its schema says `x-empty: 'invalid'`); a boolean is a flag, true for `true`, `1` or a
 * bare name (`?dryRun`), false for anything else; an integer is one when written in decimal
 * digits (`1e9`, `0x10`, ` 1` stay text and fail); `x-uppercase` values are uppercased. A name
 * given twice, where the schema's `x-messages.repeated` says so, is a problem of its own.
 */
function typedQuery(schema: Json, query: Json, repeats: Problem[]): Json {
  const out: Json = { ...query };
  const repeated = messagesOf(schema)?.repeated;
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    const v = out[name];
    if (v === undefined) continue;
    if (repeated && Array.isArray(v) && prop.type !== 'array') {
      repeats.push({ path: name, message: `${name} ${repeated}` });
      delete out[name];
    } else if (prop.type === 'boolean') out[name] = v === '' || v === 'true' || v === '1';
    else if (v === '' && prop['x-empty'] !== 'invalid') delete out[name];
    else if (prop.type === 'integer' && typeof v === 'string' && /^-?\d{1,15}$/.test(v)) out[name] = Number(v);
    else if (prop['x-uppercase'] === true && typeof v === 'string') out[name] = v.toUpperCase();
  }
  return out;
}

/**
 * A body as its schema reads it, before validation: `null` for a required field is that field
 * missing (`label is required`), and, when the schema says `x-non-object: 'empty'`, a body that is
 * not a JSON object (or none) reads as `{}` (its required fields are then missing).
 */
function readBody(schema: Json, body: unknown): unknown {
  if (schema['x-non-object'] === 'empty' && (body === null || typeof body !== 'object' || Array.isArray(body))) return {};
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const name of (schema.required ?? []) as string[]) if ((body as Json)[name] === null) delete (body as Json)[name];
  }
  return body;
}

/** The top-level field a problem's path is in (`clients` of `clients[0]`). */
const fieldOf = (path: string): string => /^[^.[]*/.exec(path)?.[0] ?? '';

/**
 * ajv errors → problems, one per field (a missing one without the manifests' `did you mean`: the
 * texts are those of the hand-written checks). An integer with both bounds says its range,
 * whichever it failed; `x-messages` win: `additionalProperties` is said at the unknown field; an array's `items` is said at the array for a failure of one of
 * its items, unless the item's schema has its own message: that is said at `<array>/<index>`
 * (`clients/0`, as the users' store names a grant).
 */
function problemsOf(root: Json, errors: NonNullable<ValidateFunction['errors']>): Problem[] {
  /** The first problem of each path. */
  const out = new Map<string, Problem>();
  const props = (root.properties ?? {}) as Record<string, Json>;
  for (const e of errors) {
    const s = e.parentSchema as Json | undefined;
    const own = messagesOf(s)?.[e.keyword];
    let path = toFieldPath(e.instancePath);
    let p: Problem | undefined;
    const field = fieldOf(path);
    const itemsMessage = path !== field ? messagesOf(props[field])?.items : undefined;
    if (e.keyword === 'additionalProperties') {
      path = toFieldPath(`${e.instancePath}/${String((e.params as { additionalProperty: string }).additionalProperty)}`);
      p = { path, message: `${path} ${own ?? 'is not a known field'}` };
    } else if (itemsMessage && own) {
      const item = e.instancePath.slice(1);
      p = { path: item, message: `${item} ${own}` };
    } else if (itemsMessage) p = { path: field, message: `${field} ${itemsMessage}` };
    else if (!own && s?.type === 'integer' && typeof s.minimum === 'number' && typeof s.maximum === 'number' && path !== '') {
      p = { path, message: `${path} must be an integer from ${String(s.minimum)} to ${String(s.maximum)}` };
    } else p = formatAjvErrors([e], '', false)[0];
    if (p && !out.has(p.path)) out.set(p.path, p);
  }
  return [...out.values()];
}

/** Problems in the order of the schema's fields (the body as a whole first); stable within a field. */
function sortByField(props: Json, problems: Problem[]): Problem[] {
  const names = Object.keys(props);
  const rank = (p: Problem) => (p.path === '' ? -1 : names.indexOf(fieldOf(p.path)) >>> 0);
  return problems.map((p, i) => ({ p, i })).sort((a, b) => rank(a.p) - rank(b.p) || a.i - b.i).map(({ p }) => p);
}

/** The schema compiled once per distinct text; a body's `$ref`s to `schemas/` inlined first. */
function compile(schema: Json, httpPart: string): { fn: ValidateFunction; root: Json } {
  const text = JSON.stringify(schema);
  let c = compiled.get(`${httpPart}:${text}`);
  if (!c) {
    const root = (httpPart === 'body' ? inlineRefs(schema, byId()) : schema) as Json;
    c = { fn: ajv.compile(root), root };
    compiled.set(`${httpPart}:${text}`, c);
  }
  return c;
}

/**
 * Fastify's validator compiler: path parameters, query strings and bodies are checked by the
 * route's own schema before its handler runs (after its guard, which runs on `onRequest`). A
 * failure is a ValidationError: 400 with the text the hand-written checks gave (`limit must be
 * an integer from 1 to 1000`, `label must be a string`) and each problem's field (`query.limit`,
 * `label`); a root `x-messages.prefix` (`Validation failed: `) leads the text of an object's
 * problems. Parts marked CHECKED_BY_HANDLER are left to their handlers.
 */
export const edgeValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const s = schema as Json;
  if (!httpPart || PREFIX[httpPart] === undefined || s[CHECKED_BY_HANDLER] === true) return () => true;
  const { fn, root } = compile(s, httpPart);
  const prefix = root['x-bare-paths'] === true ? '' : PREFIX[httpPart];
  const optional = httpPart === 'body' && OPTIONAL_BODIES.has(s);
  return (data: unknown) => {
    if (optional && (data === null || data === undefined)) return { value: undefined };
    const repeats: Problem[] = [];
    const value = httpPart === 'querystring' ? typedQuery(root, (data ?? {}) as Json, repeats) : httpPart === 'body' ? readBody(root, data) : data;
    if (fn(value) && repeats.length === 0) return { value };
    const problems = sortByField((root.properties ?? {}) as Json, [...repeats, ...problemsOf(root, fn.errors ?? [])]);
    const lead = messagesOf(root)?.prefix && !problems.some((p) => p.path === '') ? String(messagesOf(root)?.prefix) : '';
    const text = lead + problems.map(formatProblem).join('; ');
    return { error: new ValidationError(problems.map((p) => ({ ...p, path: p.path ? `${prefix}${p.path}` : prefix.replace(/\.$/, '') })), text) };
  };
};
