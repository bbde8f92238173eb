import type { FastifyDynamicSwaggerOptions, SwaggerTransformObject } from '@fastify/swagger';
import type { SchemaRegistry } from '../../controller/manifest/validator.ts';
import { EDGE_KEYWORDS } from '../validation.ts';

type Json = Record<string, unknown>;

const SCHEMA_URI = /^https:\/\/bi\.controller\/schemas\/([a-z]+)\.schema\.json(#.*)?$/;

/** Schema stems published as one component each, named as in the OpenAPI document. */
const COMPONENTS: Record<string, string> = {
  envelope: 'Manifest',
  client: 'OnboardingPackage',
  dashboard: 'DashboardImport',
  pipeline: 'PipelineImport',
  connection: 'ConnectionSpec',
  coremodel: 'CoreModelSpec',
  notifier: 'NotifierSpec',
};

/**
 * Schema stems whose `$defs` become components of their own (`#/$defs/ClientList` →
 * `#/components/schemas/ClientList`): the response bodies, one component per body.
 */
const HOISTED = new Set(['api']);

/** Where `fragment` (`#/$defs/x/...`) of schema `stem` lands in the OpenAPI document. */
function componentPointer(stem: string, fragment: string): string {
  if (HOISTED.has(stem)) {
    const m = /^#\/\$defs\/([^/]+)(.*)$/.exec(fragment);
    if (!m) throw new Error(`a reference to ${stem}.schema.json must name one of its $defs (got "${fragment}")`);
    return `#/components/schemas/${m[1]}${m[2]}`;
  }
  return `#/components/schemas/${COMPONENTS[stem] ?? stem}${fragment.slice(1)}`;
}

/**
 * A `$ref` of a schema from `schemas/` as the OpenAPI document writes it. `base` is the stem of
 * the schema the ref stands in: a local ref (`#/$defs/x`) is relative to that schema, not to the
 * document's root.
 */
export function rewriteRef(ref: string, base?: string): string {
  const m = SCHEMA_URI.exec(ref);
  if (m) return componentPointer(m[1], m[2] ?? '#');
  if (ref.startsWith('#/components/')) return ref;
  if (ref.startsWith('#') && base) return componentPointer(base, ref);
  return ref;
}

/**
 * A JSON Schema from `schemas/` (or a route schema that refers to them) as OpenAPI 3.1 writes
 * it: refs rewritten, annotation keywords dropped.
 */
export function toComponent(schema: unknown, base?: string): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toComponent(s, base));
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === '$id' || k === '$schema' || k === 'x-messages' || (EDGE_KEYWORDS as readonly string[]).includes(k)) continue;
    if (k === '$ref' && typeof v === 'string') out.$ref = rewriteRef(v, base);
    else if (k === '$defs' && HOISTED.has(base ?? '')) continue;
    else out[k] = toComponent(v, base);
  }
  return out;
}

/** Every schema of `schemas/` as components: one per file, or one per `$def` for the response files. */
export function buildComponents(schemas: SchemaRegistry): Json {
  const components: Json = {};
  for (const stem of schemas.names()) {
    const schema = schemas.schema(stem);
    if (!HOISTED.has(stem)) {
      components[COMPONENTS[stem] ?? stem] = toComponent(schema, stem);
      continue;
    }
    for (const [name, def] of Object.entries((schema.$defs ?? {}) as Json)) {
      if (name in components || Object.values(COMPONENTS).includes(name)) throw new Error(`component ${name} of ${stem}.schema.json is defined twice`);
      components[name] = toComponent(def, stem);
    }
  }
  return components;
}

/** The schemas of `schemas/` by `$id`, as the response serializer resolves refs to them. */
export function externalSchemas(schemas: SchemaRegistry): Record<string, Json> {
  const out: Record<string, Json> = {};
  for (const stem of schemas.names()) {
    const { $schema: _dialect, ...schema } = schemas.schema(stem) as Json;
    out[String(schema.$id)] = schema;
  }
  return out;
}

/**
 * Operation keys a route schema may carry for the document only, removed once applied:
 * `x-body-optional` (the body may be left out; @fastify/swagger marks every body required).
 */
function finishOperation(op: Json): Json {
  const out = toComponent(op) as Json;
  if (out['x-body-optional'] === true && out.requestBody && typeof out.requestBody === 'object') {
    (out.requestBody as Json).required = false;
  }
  delete out['x-body-optional'];
  return out;
}

export const SECURITY_SCHEMES = {
  apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key', description: 'An API key (docs/contract/api.md §5.1); `Authorization: Bearer <key>` works too' },
  bearer: { type: 'http', scheme: 'bearer', description: 'An API key as a bearer token (docs/contract/api.md §5.1)' },
  session: { type: 'apiKey', in: 'cookie', name: 'LASID', description: 'The session cookie set by POST /v1/auth/login' },
  csrf: { type: 'apiKey', in: 'header', name: 'CTN', description: 'The CSRF token returned by POST /v1/auth/login (or /v1/auth/refresh)' },
  workerToken: { type: 'http', scheme: 'bearer', description: 'BI_WORKER_TOKEN, the token of the `bictl worker`s of queue mode' },
} as const;

/**
 * The @fastify/swagger options: the document is generated from the routes' `schema`s; the
 * components are the files of `schemas/` (the one source of truth), put in by `transformObject`
 * so that every `$ref` to them resolves inside the document.
 */
export function swaggerOptions(schemas: SchemaRegistry, version: string): FastifyDynamicSwaggerOptions {
  const components = buildComponents(schemas);
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'bi-controller',
        version,
        description: 'Business-intelligence onboarding and import service, reconciled from manifests.',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'this server' }],
      components: { securitySchemes: SECURITY_SCHEMES as Json },
    } as FastifyDynamicSwaggerOptions['openapi'],
    convertConstToEnum: false,
    transformObject: (documentObject) => {
      const doc = (documentObject as { openapiObject: Json }).openapiObject;
      const paths: Json = {};
      for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
        paths[path] = Object.fromEntries(Object.entries(item).map(([method, op]) => [method, finishOperation(op as Json)]));
      }
      return {
        ...doc,
        jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
        paths,
        components: { schemas: components, securitySchemes: SECURITY_SCHEMES },
      } as ReturnType<SwaggerTransformObject>;
    },
  };
}
