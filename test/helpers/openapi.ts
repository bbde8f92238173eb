import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

/**
 * Every response a test gets from `app.inject` is checked against the OpenAPI document the app
 * serves (`GET /openapi.json`): its status must be documented for the route, its media type
 * too, and a JSON body must match the documented schema. A mismatch fails the test at that
 * `inject`. Routes the document does not describe (the UI, probes of the guard tests) pass.
 */

type Json = Record<string, unknown>;
interface Operation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface OpenApi {
  paths: Record<string, Record<string, Operation>>;
}

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (
  ajv: Ajv2020,
) => void;

const DOC = 'https://bi.controller/openapi.json';
const pointer = (...segments: string[]) => segments.map((s) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/');

/** The served document, compiled once per distinct document (most apps of a test run serve the same). */
export class ResponseChecker {
  readonly #doc: OpenApi;
  readonly #ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false, allowUnionTypes: true });
  readonly #validators = new Map<string, ValidateFunction>();
  readonly #routes: { path: string; pattern: RegExp; literal: number }[];

  constructor(doc: OpenApi) {
    this.#doc = doc;
    addFormats(this.#ajv);
    this.#ajv.addSchema(doc as unknown as Json, DOC);
    this.#routes = Object.keys(doc.paths).map((path) => ({
      path,
      pattern: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\\?\{[^}]+\\?\}/g, '[^/]+')}$`),
      literal: path.split('/').filter((s) => s && !s.startsWith('{')).length,
    }));
  }

  /** The documented path a concrete URL is served by (the most literal segments win, as in the router). */
  pathOf(url: string): string | undefined {
    const plain = url.split('?')[0];
    const matches = this.#routes.filter((r) => r.pattern.test(plain)).sort((a, b) => b.literal - a.literal);
    return matches[0]?.path;
  }

  /** What is wrong with a response, or undefined when the document describes it. */
  problem(method: string, url: string, res: { statusCode: number; headers: Record<string, unknown>; body: string }): string | undefined {
    const path = this.pathOf(url);
    const op = path ? this.#doc.paths[path][method.toLowerCase()] : undefined;
    if (!path || !op) return undefined;
    const where = `${method.toUpperCase()} ${path} answered ${res.statusCode}`;
    const response = op.responses[String(res.statusCode)] ?? op.responses.default;
    if (!response) return `${where}, a status the OpenAPI document does not list (${Object.keys(op.responses).join(', ')})`;
    if (!response.content) return res.body.length ? `${where} with a body the document does not describe` : undefined;
    const type = String(res.headers['content-type'] ?? '').split(';')[0].trim();
    const media = response.content[type];
    if (!media) return `${where} as ${type || 'no content type'}; the document says ${Object.keys(response.content).join(', ')}`;
    if (type !== 'application/json' || !media.schema) return undefined;
    const key = pointer('paths', path, method.toLowerCase(), 'responses', String(res.statusCode), 'content', type, 'schema');
    let validate = this.#validators.get(key);
    if (!validate) {
      validate = this.#ajv.getSchema(`${DOC}#/${key}`) as ValidateFunction;
      this.#validators.set(key, validate);
    }
    let body: unknown;
    try {
      body = JSON.parse(res.body);
    } catch {
      return `${where} with a body that is not JSON: ${res.body.slice(0, 200)}`;
    }
    if (validate(body)) return undefined;
    const errors = (validate.errors ?? []).map((e) => `${e.instancePath || '(body)'} ${e.message}`).join('; ');
    return `${where} with a body that does not match the document: ${errors}\n${res.body.slice(0, 1000)}`;
  }
}

const checkers = new Map<string, ResponseChecker>();

type Inject = (opts: InjectOptions | string) => Promise<LightMyRequestResponse>;

/**
 * Makes `app.inject(opts)` check every response against the document `app` serves (see
 * ResponseChecker). `makeTestApp` and `withApp` apply it; a test that builds its own app
 * wraps it: `checkResponses(await buildApp(...))`.
 */
export function checkResponses<T extends FastifyInstance>(app: T): T {
  const inject = app.inject.bind(app) as Inject;
  let checker: Promise<ResponseChecker> | undefined;
  const load = async (): Promise<ResponseChecker> => {
    const text = (await inject({ method: 'GET', url: '/openapi.json' })).body;
    let found = checkers.get(text);
    if (!found) checkers.set(text, (found = new ResponseChecker(JSON.parse(text) as OpenApi)));
    return found;
  };
  const checked = async (opts: InjectOptions | string): Promise<LightMyRequestResponse> => {
    const res = await inject(opts);
    const { method = 'GET', url = '/' } = typeof opts === 'string' ? { url: opts } : { method: opts.method, url: typeof opts.url === 'string' ? opts.url : opts.path };
    checker ??= load();
    const problem = (await checker).problem(String(method), String(url), res);
    if (problem) throw new Error(`Response not as documented: ${problem}`);
    return res;
  };
  (app as { inject: unknown }).inject = (opts?: InjectOptions | string, callback?: unknown) =>
    opts === undefined || callback !== undefined ? (inject as (...a: unknown[]) => unknown)(opts, callback) : checked(opts);
  return app;
}
