import type { FastifySchemaCompiler } from 'fastify';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ValidationError, formatProblem } from '../controller/errors.ts';
import { formatAjvErrors, newAjv, toFieldPath } from '../controller/manifest/validator.ts';
import type { Problem } from '../controller/types.ts';

type Json = Record<string, unknown>;

/**
 * A route schema part (a querystring, a body) its handler checks itself, so the edge does not:
 * the manifest bodies (the SchemaRegistry fills in defaults, warns of unknown fields, locates
 * lines) and the queries whose hand parser predates this (audit, clients, reconcile status).
 * Dropped from the OpenAPI document.
 */
export const CHECKED_BY_HANDLER = 'x-checked-by-handler';

/** Where a part's problems are: `query.limit`, `params.runId`. */
const PREFIX: Record<string, string> = { querystring: 'query', params: 'params' };

/** One Ajv for every route (the same options as the SchemaRegistry's: verbose errors, `x-messages`). */
const ajv = newAjv({ allErrors: true, useDefaults: true });
/** Compiled validators by the text of their schema: routes share most parts (`{userId}`, `?dryRun`). */
const compiled = new Map<string, ValidateFunction>();

/**
 * A query string as its schema types it, before validation: an empty value (`?limit=`) is absent;
 * a boolean is a flag, true for `true`, `1` or a bare name (`?dryRun`), false for anything else;
 * an integer is one when written in decimal digits (`1e9`, `0x10`, ` 1` stay text and fail).
 */
function typedQuery(schema: Json, query: Json): Json {
  const out: Json = { ...query };
  for (const [name, prop] of Object.entries((schema.properties ?? {}) as Record<string, Json>)) {
    const v = out[name];
    if (v === undefined) continue;
    if (prop.type === 'boolean') out[name] = v === '' || v === 'true' || v === '1';
    else if (v === '') delete out[name];
    else if (prop.type === 'integer' && typeof v === 'string' && /^-?\d{1,15}$/.test(v)) out[name] = Number(v);
  }
  return out;
}

/** ajv errors → problems, one per field and text; an integer with both bounds says its range, whichever it failed. */
function problemsOf(errors: NonNullable<ValidateFunction['errors']>): Problem[] {
  const out = new Map<string, Problem>();
  for (const e of errors) {
    const s = e.parentSchema as Json | undefined;
    const path = toFieldPath(e.instancePath);
    const ranged = s?.type === 'integer' && typeof s.minimum === 'number' && typeof s.maximum === 'number' && path !== '';
    const p = ranged ? { path, message: `${path} must be an integer from ${String(s.minimum)} to ${String(s.maximum)}` } : formatAjvErrors([e])[0];
    if (p) out.set(`${p.path}|${p.message}`, p);
  }
  return [...out.values()];
}

/**
 * Fastify's validator compiler: path parameters and query strings are checked by the route's own
 * schema before its handler runs (after its guard, which runs on `onRequest`). A failure is a
 * ValidationError: 400 with the text the hand-written checks gave (`limit must be an integer from 1
 * to 1000`) and each problem's field (`query.limit`). Bodies are checked by their handlers.
 */
export const edgeValidator: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  const s = schema as Json;
  if (httpPart === 'body' || httpPart === 'headers' || s[CHECKED_BY_HANDLER] === true || !httpPart || !PREFIX[httpPart]) return () => true;
  const text = JSON.stringify(s);
  let validate = compiled.get(text);
  if (!validate) compiled.set(text, (validate = ajv.compile(s)));
  const fn = validate;
  const prefix = PREFIX[httpPart];
  return (data: unknown) => {
    const value = httpPart === 'querystring' ? typedQuery(s, (data ?? {}) as Json) : data;
    if (fn(value)) return { value };
    const problems = problemsOf(fn.errors ?? []);
    const text = problems.map(formatProblem).join('; ');
    return { error: new ValidationError(problems.map((p) => ({ ...p, path: p.path ? `${prefix}.${p.path}` : prefix })), text) };
  };
};
