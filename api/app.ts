import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import swagger from '@fastify/swagger';
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions } from 'fastify';
import { ROOT } from '../controller/paths.ts';
import { trustFunction, type ServerTimeouts, type TrustProxy } from '../controller/config.ts';
import type { Logger } from '../controller/log.ts';
import type { Runtime } from '../controller/runtime.ts';
import { ValidationError } from '../controller/errors.ts';
import { MAX_BODY_CONTAINERS, MAX_BODY_VALUES, registerBodyShapeCheck } from './body-shape.ts';
import { errorHandler, notFoundHandler } from './errors.ts';
import { swaggerOptions } from './openapi/document.ts';
import { responseSerializer } from './openapi/serializer.ts';
import { routes } from './routes/index.ts';
import { installGuard } from './auth/guards.ts';
import { edgeValidator } from './validation.ts';
import { registerWarnings } from './warnings.ts';
import { lazyChildLoggerFactory } from './request-logger.ts';

export interface AppOptions {
  runtime: Runtime;
  /** Logger for requests; silent when omitted (tests). */
  logger?: Logger;
  /** Maximum request body in bytes (413 beyond). */
  bodyLimit?: number;
  /** Proxies trusted with X-Forwarded-* (client address, `Secure` cookies); `true` = one hop. */
  trustProxy?: TrustProxy | boolean;
  /** Connection timeouts (the listening server passes the configured ones; inject needs none). */
  timeouts?: ServerTimeouts;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The answer carries a secret or a token (login, refresh, key or user creation): sent with
     * `Cache-Control: no-store`, whatever the status, so no cache or history keeps it.
     */
    noStore?: boolean;
  }
  interface FastifyInstance {
    runtime: Runtime;
    registeredRoutes: { method: string; url: string }[];
  }
}

/**
 * One line per request, at debug level: per-request info lines would cost more than the
 * requests themselves on the hot endpoints. `BI_LOG_LEVEL=debug` shows them.
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    if (error || !(request.log as Logger).isLevelEnabled('debug')) return;
    request.log.debug({ method: request.method, url: request.url.split('?')[0], status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
  }
}

/**
 * Node checks header and request deadlines on an interval (30 s by default, which would let a
 * 1 s deadline last 31 s); checked every second (or faster for shorter deadlines) instead.
 */
function timeoutOptions(t: ServerTimeouts) {
  return {
    connectionTimeout: t.idleMs,
    keepAliveTimeout: t.keepAliveMs,
    requestTimeout: t.requestMs,
    http: { headersTimeout: t.headersMs, requestTimeout: t.requestMs, connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(t.headersMs / 4))) },
  };
}

/** Builds the HTTP app without listening, so tests drive it with `app.inject()`. */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger,
    logController: new RequestLog(),
    childLoggerFactory: lazyChildLoggerFactory as unknown as FastifyServerOptions['childLoggerFactory'],
    bodyLimit: opts.bodyLimit ?? opts.runtime.config.bodyLimit,
    trustProxy: trustFunction(opts.trustProxy === true ? { hops: 1 } : (opts.trustProxy ?? false)),
    ...(opts.timeouts ? timeoutOptions(opts.timeouts) : {}),
    ajv: { customOptions: { allErrors: true } },
  }) as unknown as FastifyInstance;
  app.decorate('runtime', opts.runtime);
  // Every route as registered (method, path): the OpenAPI test checks each one is documented.
  const registered: { method: string; url: string }[] = [];
  app.decorate('registeredRoutes', registered);
  // Per-route hooks are given only to the routes that need them: a hook on every request costs
  // every request (the public constant routes are measured against a bare Fastify, docs/benchmarks.md).
  app.addHook('onRoute', (r) => {
    // The guard its schema states, first on onRequest: refused before anything is read or validated.
    installGuard(app, r);
    const methods = [r.method].flat();
    for (const method of methods) if (method !== 'HEAD') registered.push({ method, url: r.url });
    // Before the guard: a refusal of such a route is not cached either.
    if (r.config?.noStore) r.onRequest = [noStore, ...[r.onRequest ?? []].flat()];
    // Fastify parses no body for GET and HEAD: only routes that take one get the depth check.
    if (methods.some((m) => m !== 'GET' && m !== 'HEAD')) r.preValidation = [...[r.preValidation ?? []].flat(), bodyDepthCheck];
  });
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  // Big bodies are cheap: objects and arrays counted (and depth measured) on the text, before JSON.parse builds anything.
  registerBodyShapeCheck(app, { maxContainers: MAX_BODY_CONTAINERS, maxValues: MAX_BODY_VALUES, maxDepth: MAX_BODY_DEPTH });
  // Path parameters, query strings and bodies are validated by the route's schema, after its guard
  // (on onRequest: 401 before 400), with the texts of docs/contract/api.md. The manifest bodies stay
  // with their handlers (the SchemaRegistry, for defaults, unknown-field warnings and lines).
  app.setValidatorCompiler(edgeValidator);
  // Response schemas serialize: a field a schema does not declare is never sent.
  app.setSerializerCompiler(responseSerializer(opts.runtime.schemas));
  registerWarnings(app);
  await app.register(swagger, swaggerOptions(opts.runtime.schemas, VERSION));
  for (const plugin of routes) await app.register(plugin);
  return app;
}

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

export const MAX_BODY_DEPTH = 64;

/** The answer carries a secret or a token (`config.noStore`): `Cache-Control: no-store`, whatever the status. */
function noStore(_req: FastifyRequest, reply: FastifyReply, done: () => void): void {
  void reply.header('cache-control', 'no-store');
  done();
}

/**
 * JSON.parse takes any depth, but recursive code after it (structuredClone, ajv, YAML) does
 * not: a body nested thousands deep would end in a stack overflow and a 500.
 */
function bodyDepthCheck(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  if (req.body !== null && typeof req.body === 'object' && nestedDeeperThan(req.body, MAX_BODY_DEPTH)) {
    done(new ValidationError([{ path: 'body', message: `is nested deeper than ${MAX_BODY_DEPTH} levels` }]));
    return;
  }
  done();
}

/** Whether `value` has containers nested more than `max` deep (iterative: no recursion to overflow). */
export function nestedDeeperThan(value: object, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (v === null || typeof v !== 'object') continue;
    if (depth > max) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
