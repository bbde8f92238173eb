import Fastify, { type FastifyInstance } from 'fastify';
import type { Logger } from '../controller/log.ts';
import type { Runtime } from '../controller/runtime.ts';
import { errorHandler, notFoundHandler } from './errors.ts';
import { routes } from './routes/index.ts';

export interface AppOptions {
  runtime: Runtime;
  /** Logger for requests; silent when omitted (tests). */
  logger?: Logger;
  /** Maximum request body in bytes (413 beyond). */
  bodyLimit?: number;
  /** Trust X-Forwarded-* (behind a proxy): decides `Secure` cookies. */
  trustProxy?: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    runtime: Runtime;
  }
}

/** Builds the HTTP app without listening, so tests drive it with `app.inject()`. */
export async function buildApp(opts: AppOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger,
    bodyLimit: opts.bodyLimit ?? opts.runtime.config.bodyLimit,
    trustProxy: opts.trustProxy ?? false,
    ajv: { customOptions: { allErrors: true } },
  }) as unknown as FastifyInstance;
  app.decorate('runtime', opts.runtime);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFoundHandler);
  for (const plugin of routes) await app.register(plugin);
  return app;
}
