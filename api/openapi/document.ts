import type { SchemaRegistry } from '../../controller/manifest/validator.ts';

type Json = Record<string, unknown>;

const SCHEMA_URI = /^https:\/\/bi\.controller\/schemas\/([a-z]+)\.schema\.json(#.*)?$/;

/** Schema stems published as components, named as in the OpenAPI document. */
const COMPONENTS: Record<string, string> = {
  envelope: 'Manifest',
  client: 'OnboardingPackage',
  dashboard: 'DashboardImport',
  pipeline: 'PipelineImport',
  connection: 'ConnectionSpec',
  coremodel: 'CoreModelSpec',
};

/** A JSON Schema from `schemas/` as an OpenAPI 3.1 component: refs rewritten, annotation keywords dropped. */
export function toComponent(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toComponent);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Json = {};
  for (const [k, v] of Object.entries(schema as Json)) {
    if (k === '$id' || k === '$schema' || k === 'x-messages') continue;
    if (k === '$ref' && typeof v === 'string') {
      const m = SCHEMA_URI.exec(v);
      out.$ref = m ? `#/components/schemas/${COMPONENTS[m[1]] ?? m[1]}${(m[2] ?? '#').slice(1)}` : v;
      continue;
    }
    out[k] = toComponent(v);
  }
  return out;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown, description = '') => ({ description, content: { 'application/json': { schema } } });
const errorBody = { type: 'object', properties: { success: { const: false }, error: { type: 'string' } } };
const keyError = { type: 'object', properties: { error: { enum: ['API key required', 'Invalid API key', 'API key expired'] } } };
const userId = { name: 'userId', in: 'path', required: true, schema: { type: 'string', pattern: '^U\\d{4}A\\d{5}$' } };
const pathParam = (name: string) => ({ name, in: 'path', required: true, schema: { type: 'string' } });
const dryRun = { name: 'dryRun', in: 'query', schema: { type: 'boolean' }, description: 'validate and show the plan, write nothing' };

interface Op {
  summary: string;
  auth: 'A' | 'S' | 'none' | 'HMAC';
  params?: unknown[];
  body?: string;
  ok: [number, unknown?];
  errors?: Record<number, unknown>;
}

function op(o: Op): Json {
  const security = o.auth === 'A' ? [{ apiKey: [] }, { bearer: [] }] : o.auth === 'S' ? [{ session: [], csrf: [] }] : [];
  const responses: Json = { [o.ok[0]]: json(o.ok[1] ?? { type: 'object' }, 'success') };
  if (o.auth === 'A') {
    responses[401] = json(keyError, 'missing, invalid or expired API key');
    responses[429] = json({ type: 'object', properties: { error: { const: 'Rate limit exceeded' } } }, 'per-key request limit (Retry-After)');
  }
  if (o.auth === 'S') {
    responses[401] = json(errorBody, 'Session required');
    responses[403] = json(errorBody, 'Invalid CSRF token, another user, or missing role');
  }
  for (const [code, schema] of Object.entries(o.errors ?? {})) responses[code] = json(schema, 'error');
  return {
    summary: o.summary,
    security,
    ...(o.params ? { parameters: o.params } : {}),
    ...(o.body ? { requestBody: { required: true, content: { 'application/json': { schema: ref(o.body) } } } } : {}),
    responses,
  };
}

/** The OpenAPI 3.1 document: paths of the spec and DESIGN.md, bodies from the JSON Schemas of `schemas/`. */
export function buildOpenApi(schemas: SchemaRegistry, version: string): Json {
  const components: Json = {};
  for (const stem of schemas.names()) components[COMPONENTS[stem] ?? stem] = toComponent(schemas.schema(stem));
  const paths: Json = {
    '/v1/sdk/client/onboard': {
      post: op({ summary: 'Onboard a client (4.1)', auth: 'A', params: [dryRun], body: 'OnboardingPackage', ok: [201], errors: { 200: { description: 'ALREADY_EXISTS' }, 400: errorBody, 422: errorBody } }),
    },
    '/v1/sdk/client/onboard/{userId}': {
      post: op({ summary: 'Onboard a client, browser session (4.1)', auth: 'S', params: [userId, dryRun], body: 'OnboardingPackage', ok: [201], errors: { 400: errorBody, 422: errorBody } }),
    },
    '/v1/sdk/import': { post: op({ summary: 'Import a dashboard (4.2)', auth: 'A', params: [dryRun], body: 'DashboardImport', ok: [201], errors: { 400: errorBody } }) },
    '/v1/sdk/import/{userId}': {
      post: op({ summary: 'Import a dashboard, browser session (4.3)', auth: 'S', params: [userId, dryRun], body: 'DashboardImport', ok: [201], errors: { 400: errorBody } }),
    },
    '/v1/sdk/import-pipeline': {
      post: op({ summary: 'Import a pipeline (4.4)', auth: 'A', params: [dryRun], body: 'PipelineImport', ok: [201], errors: { 400: { type: 'object', properties: { success: { const: false }, message: { type: 'string' } } } } }),
    },
    '/v1/sdk/import-pipeline/{userId}': {
      post: op({ summary: 'Import a pipeline, browser session', auth: 'S', params: [userId, dryRun], body: 'PipelineImport', ok: [201] }),
    },
    '/v1/sdk/dashboards/{facadeId}': { get: op({ summary: 'A stored dashboard, defaults applied', auth: 'A', params: [pathParam('facadeId')], ok: [200], errors: { 404: errorBody } }) },
    '/v1/sdk/pipelines/{pipelineId}': { get: op({ summary: 'A stored pipeline with resolved steps', auth: 'A', params: [pathParam('pipelineId')], ok: [200], errors: { 404: errorBody } }) },
    '/v1/sdk/chart-types': { get: op({ summary: 'Chart types and aggregations (4.9)', auth: 'none', ok: [200] }) },
    '/v1/bi/admin/clients/{userId}': {
      get: op({
        summary: 'List clients (4.5)',
        auth: 'S',
        params: [
          userId,
          { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } },
          { name: 'status', in: 'query', schema: { enum: ['ACTIVE', 'FAILED', 'DELETED'] } },
          { name: 'search', in: 'query', schema: { type: 'string' }, description: 'case-insensitive regular expression on clientId or clientName' },
        ],
        ok: [200],
        errors: { 400: errorBody },
      }),
    },
    '/v1/bi/admin/clients/{clientId}/{userId}': { get: op({ summary: 'One client (4.6)', auth: 'S', params: [pathParam('clientId'), userId], ok: [200], errors: { 404: errorBody } }) },
    '/v1/bi/admin/clients/{clientId}/export/{userId}': {
      get: op({ summary: 'The onboarding package that recreates a client', auth: 'S', params: [pathParam('clientId'), userId], ok: [200, ref('OnboardingPackage')], errors: { 404: errorBody } }),
    },
    '/v1/api-keys/{userId}': {
      post: op({ summary: 'Create an API key (4.7)', auth: 'S', params: [userId], ok: [201], errors: { 400: errorBody } }),
      get: op({ summary: "The caller's API keys, without secrets", auth: 'S', params: [userId], ok: [200] }),
    },
    '/v1/api-keys/{userId}/{keyId}': { delete: op({ summary: 'Revoke an API key (4.8)', auth: 'S', params: [userId, pathParam('keyId')], ok: [200], errors: { 404: errorBody } }) },
    '/v1/auth/login': { post: op({ summary: 'Log in: session cookies and a CSRF token (429 with Retry-After past the login limit)', auth: 'none', ok: [200], errors: { 401: errorBody, 429: errorBody } }) },
    '/v1/auth/refresh': { post: op({ summary: 'Refresh the access token', auth: 'none', ok: [200], errors: { 401: errorBody } }) },
    '/v1/auth/logout': { post: op({ summary: 'Log out (server-side revocation)', auth: 'none', ok: [200] }) },
    '/v1/auth/session': { get: op({ summary: 'Who is logged in (session)', auth: 'S', ok: [200] }) },
    '/v1/settings/session/{userId}': { get: op({ summary: 'Settings UI: role, settings visibility, secret store state', auth: 'S', params: [userId], ok: [200] }) },
    '/v1/bi/admin/core-models/{userId}': { get: op({ summary: 'Core models to inherit from (settings UI)', auth: 'S', params: [userId], ok: [200] }) },
    '/v1/bi/admin/test-connection/{userId}': { post: op({ summary: 'Test Connection: really connects (PostgreSQL, Snowflake)', auth: 'S', params: [userId], ok: [200], errors: { 400: errorBody } }) },
    '/v1/bi/admin/connections/{userId}': {
      post: op({ summary: 'Write a Connection manifest, the password stored encrypted (secretRef)', auth: 'S', params: [userId], ok: [201], errors: { 400: errorBody, 409: errorBody, 422: errorBody } }),
    },
    '/v1/bi/admin/clients/{clientId}/audit/{userId}': {
      get: op({ summary: "A client's onboarding audit and its manifest's reconcile status", auth: 'S', params: [pathParam('clientId'), userId], ok: [200], errors: { 404: errorBody } }),
    },
    '/v1/reconciler/status': { get: op({ summary: 'Per-manifest reconcile status', auth: 'S', ok: [200] }) },
    '/v1/reconciler/sync': { post: op({ summary: 'Sync now', auth: 'S', ok: [200] }) },
    '/v1/reconciler/events': { get: op({ summary: 'Server-sent reconcile events', auth: 'S', ok: [200] }) },
    '/v1/reconciler/webhook': { post: op({ summary: 'Git push hook (HMAC SHA-256 in X-Hub-Signature-256)', auth: 'HMAC', ok: [202], errors: { 401: errorBody } }) },
    '/healthz': { get: op({ summary: 'Liveness', auth: 'none', ok: [200] }) },
    '/readyz': { get: op({ summary: 'Readiness: 200 after the first full sync', auth: 'none', ok: [200], errors: { 503: { type: 'object' } } }) },
    '/metrics': { get: op({ summary: 'Prometheus metrics, text format (bearer BI_METRICS_TOKEN when set)', auth: 'none', ok: [200, { type: 'string' }], errors: { 401: errorBody } }) },
    '/v1/reconciler/notifiers': { get: op({ summary: 'Delivery state of each Notifier (admin)', auth: 'S', ok: [200] }) },
  };
  return {
    openapi: '3.1.0',
    info: { title: 'bi-controller', version, description: 'Business-intelligence onboarding and import service, reconciled from manifests.' },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: components,
      securitySchemes: {
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        bearer: { type: 'http', scheme: 'bearer' },
        session: { type: 'apiKey', in: 'cookie', name: 'LASID' },
        csrf: { type: 'apiKey', in: 'header', name: 'CTN' },
      },
    },
  };
}
