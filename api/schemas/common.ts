import type { FastifySchema } from 'fastify';
import { CHECKED_BY_HANDLER, optionalBody } from '../validation.ts';

/**
 * Route schemas: what each route accepts and answers, read by @fastify/swagger for the OpenAPI
 * document (`GET /openapi.json`), by the response serializer (a field no response schema declares
 * is never sent), by the edge's validator (path parameters and query strings, api/validation.ts)
 * and, for who may call the route, by its guard (api/auth/guards.ts). Bodies are checked by the
 * handlers (the manifests with the SchemaRegistry).
 */

export type Json = Record<string, unknown>;

const API = 'https://bi.controller/schemas/api.schema.json#/$defs/';

/** A body of `schemas/api.schema.json` (`$defs/<name>`). */
export const apiBody = (name: string): Json => ({ $ref: `${API}${name}` });

/** A response: its description and a body of `schemas/api.schema.json`. */
export const answer = (name: string, description: string): Json => ({ description, $ref: `${API}${name}` });

/** A response that is one of several bodies of `schemas/api.schema.json`. */
export const oneOf = (names: string[], description: string): Json => ({ description, oneOf: names.map(apiBody) });

/** A whole schema of `schemas/` by its stem (`client`, `dashboard`, `pipeline`, ...). */
export const schemaFile = (stem: string): Json => ({ $ref: `https://bi.controller/schemas/${stem}.schema.json` });

/** Path parameters, each required. */
export function pathParams(props: Record<string, Json>): Json {
  return { type: 'object', required: Object.keys(props), properties: props };
}

export const USER_ID: Json = { type: 'string', pattern: '^U\\d{4}A\\d{5}$', description: 'the ID of the signed-in user (docs/contract/api.md §5.2)' };
export const CLIENT_ID: Json = { type: 'string', description: 'client ID (case-insensitive: stored uppercased)' };

/** `?dryRun`: a flag (api/validation.ts), true for `true`, `1` or a bare `?dryRun`; any other value is false. */
const DRY_RUN: Json = {
  type: 'object',
  properties: { dryRun: { type: 'boolean', default: false, description: '`true`, `1` or empty: validate and show the plan, write nothing (any other value: false)' } },
};

/** A body its handler checks itself: documented, not validated at the edge (api/validation.ts). */
export const checkedByHandler = (schema: Json): Json => ({ ...schema, [CHECKED_BY_HANDLER]: true });

/** A manifest body (`client`, `dashboard`, `pipeline`): checked by its handler with the SchemaRegistry (defaults, unknown-field warnings, lines). */
export const manifestBody = (stem: string): Json => checkedByHandler(schemaFile(stem));

/**
 * The parts of a submitted write (onboarding, imports) that differ between its two variants: by
 * API key at the spec's path, and by browser session at `<path>/{userId}`; both take `?dryRun`.
 */
export function writeVariant(auth: 'apiKey' | 'session' | 'admin', operationId: string, summary: { apiKey: string; session: string }) {
  const byKey = auth === 'apiKey';
  return {
    method: 'POST' as const,
    auth,
    operationId: byKey ? operationId : `${operationId}Session`,
    summary: byKey ? summary.apiKey : summary.session,
    ...(byKey ? {} : { params: pathParams({ userId: USER_ID }) }),
    querystring: DRY_RUN,
  };
}

/**
 * Who may call a route, stated once: it decides the route's guard (run on `onRequest`, installed
 * by buildApp from this), its security requirement and the guard's failures in the document.
 */
export type Auth =
  /** API key (docs/contract/api.md §5.1): 401 `{error}`, 429 past the per-key limit. */
  | 'apiKey'
  /** Browser session with the CTN header (docs/contract/api.md §5.2): 401 Session required, 403 CSRF or another user. */
  | 'session'
  /** Browser session of an admin: also 403 Admin role required. */
  | 'admin'
  /** A `bictl worker` of queue mode: `Authorization: Bearer <BI_WORKER_TOKEN>`, 401 otherwise. */
  | 'worker'
  /** Anyone (health, login, the chart types, the HMAC-signed webhook). */
  | 'public';

/** A route's access as its guard reads it. */
export interface Access {
  auth: Auth;
  /** Session routes read by an EventSource (no headers): the CSRF token may come as `?ctn=`. */
  csrfFromQuery?: boolean;
}

/** The access of each schema `route()` built; the guard is chosen from it (api/auth/guards.ts). */
const ACCESS = new WeakMap<object, Access>();

/** The access a route's schema states, when `route()` built it. */
export function accessOf(schema: unknown): Access | undefined {
  return schema && typeof schema === 'object' ? ACCESS.get(schema) : undefined;
}

/** Which body a route's own failures have: docs/contract/api.md §7's `{success, error}` or docs/contract/api.md §4.4's `{success, message}`. */
export type ErrorVariant = 'ErrorBody' | 'MessageError';

export interface RouteDoc {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: Auth;
  /** Session routes read by an EventSource: the CSRF token may come as `?ctn=`. */
  csrfFromQuery?: boolean;
  /** The method: POST, PUT and PATCH routes parse a body and can answer its failures. */
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  params?: Json;
  querystring?: Json;
  body?: Json;
  /** The body may be left out (@fastify/swagger marks every body required). */
  bodyOptional?: boolean;
  /** The body's media types when more than JSON (the route parses the others itself). */
  consumes?: string[];
  /** The route takes the raw bytes of any media type (no JSON parsing: no 400 or 415 from it). */
  rawBody?: boolean;
  /** Status → response; the guard's failures, 500, 503 and the body's failures are added. */
  response: Record<number, Json>;
  errors?: ErrorVariant;
}

const RETRY_AFTER = { 'retry-after': { type: 'integer', minimum: 1, description: 'seconds until a request is accepted again' } };

/** The failures every route of `auth` can answer, before its handler runs. */
function guardResponses(auth: Auth): Record<number, Json> {
  switch (auth) {
    case 'apiKey':
      return {
        401: answer('ApiKeyError', 'No API key, or an unknown, revoked or expired one'),
        429: { ...answer('RateLimited', 'Past the per-key request limit'), headers: RETRY_AFTER },
      };
    case 'session':
      return {
        401: answer('ErrorBody', 'Session required: no or an expired session cookie (LASID)'),
        403: answer('ErrorBody', 'Invalid CSRF token (header CTN), or `{userId}` is not the session\'s user'),
      };
    case 'admin':
      return {
        401: answer('ErrorBody', 'Session required: no or an expired session cookie (LASID)'),
        403: answer('ErrorBody', "Invalid CSRF token (header CTN), `{userId}` is not the session's user, or Admin role required"),
      };
    case 'worker':
      return { 401: answer('ErrorBody', 'BI_WORKER_TOKEN missing, wrong, or not set on the controller') };
    case 'public':
      return {};
  }
}

const SECURITY: Record<Auth, Json[]> = {
  apiKey: [{ apiKey: [] }, { bearer: [] }],
  session: [{ session: [], csrf: [] }],
  admin: [{ session: [], csrf: [] }],
  worker: [{ workerToken: [] }],
  public: [],
};

/** Whether some parameter of `params` can fail validation (more than a bare string). */
function constrained(params: Json | undefined): boolean {
  const props = (params?.properties ?? {}) as Record<string, Json>;
  return Object.values(props).some((p) => Object.keys(p).some((k) => k !== 'type' && k !== 'description'));
}

/** A route's `schema`: the document's operation, and the serializer of every answer. */
export function route(d: RouteDoc): FastifySchema {
  const err = d.errors ?? 'ErrorBody';
  const response: Record<number, Json> = { ...guardResponses(d.auth) };
  // Path parameters, query strings and bodies are validated at the edge (api/validation.ts).
  if (constrained(d.params) || d.querystring) response[400] = answer(err, 'A path parameter or query value is invalid (each named in `problems`)');
  if (d.method === 'POST' || d.method === 'PATCH') {
    response[413] = answer(err, 'The body is larger than the limit (BI_BODY_LIMIT)');
    if (!d.rawBody) {
      const checked = d.body && d.body[CHECKED_BY_HANDLER] !== true ? ', or a field of it is invalid (each named in `problems`)' : '';
      response[400] = answer(err, `Malformed JSON, an empty body, or a body nested too deep${checked}`);
      response[415] = answer(err, 'Unsupported content type: send application/json');
    }
  }
  Object.assign(response, d.response);
  // A suspended or offboarded client's keys and members are refused on every route (controller/authz).
  const held = 'The client is suspended or offboarded: `Client <ID> is suspended` (or `offboarded`)';
  if (d.auth === 'apiKey') response[403] ??= answer(err, held);
  else if (d.auth !== 'public' && d.auth !== 'worker' && err === 'MessageError' && response[403]) response[403] = oneOf(['ErrorBody', 'MessageError'], `${String(response[403].description)}; or ${held}`);
  response[500] ??= answer(err, 'Internal server error (details in the log)');
  // Any route may write the store (a session, a key's last use): a full disk or a busy store is "not done, retry".
  response[503] ??= answer(err, 'The store or the disk cannot take writes now (full, busy); nothing was done, retry later');
  const schema = {
    operationId: d.operationId,
    summary: d.summary,
    ...(d.description ? { description: d.description } : {}),
    tags: d.tags,
    security: SECURITY[d.auth],
    ...(d.params ? { params: d.params } : {}),
    ...(d.querystring ? { querystring: d.querystring } : {}),
    ...(d.body ? { body: d.bodyOptional ? optionalBody(d.body) : d.body } : {}),
    ...(d.bodyOptional ? { 'x-body-optional': true } : {}),
    ...(d.consumes ? { consumes: d.consumes } : {}),
    response,
  } as FastifySchema;
  ACCESS.set(schema, { auth: d.auth, ...(d.csrfFromQuery ? { csrfFromQuery: true } : {}) });
  return schema;
}

/** Pages and files that are not part of the API: served, never documented. */
export const HIDDEN: FastifySchema = { hide: true } as FastifySchema;
