import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ConflictError, ForbiddenError, NotFoundError, StepError, UnavailableError, ValidationError } from '../controller/errors.ts';

/** Every domain error → HTTP status, in one place. */
export function statusOf(err: unknown): number {
  if (err instanceof ValidationError) return 400;
  if (err instanceof ForbiddenError) return 403;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof ConflictError) return 409;
  if (err instanceof StepError) return 422;
  if (err instanceof UnavailableError) return 503;
  const e = err as Partial<FastifyError>;
  if (typeof e.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 600) return e.statusCode;
  return 500;
}

/** Fastify's own client errors, with messages a user can act on. */
export function clientMessage(err: FastifyError): string {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'Request body is larger than the limit';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return 'Unsupported content type: send application/json';
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'Request body is empty';
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return `Malformed JSON body: ${err.message}`;
    default:
      return err.message;
  }
}

export function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const status = statusOf(err);
  if (status >= 500 && !(err instanceof UnavailableError)) {
    req.log.error({ err: err.message, stack: err.stack }, 'request failed');
    void reply.status(500).send({ success: false, error: 'Internal server error' });
    return;
  }
  const message = err instanceof ValidationError ? err.message : err.code?.startsWith('FST_') ? clientMessage(err) : err.message;
  void reply.status(status).send({ success: false, error: message });
}

export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send({ success: false, error: `Route ${req.method} ${req.url.split('?')[0]} not found` });
}

/** Error handler of the pipeline endpoints: failures as `{success:false, message}` (spec 4.4), not `error`. */
export function messageErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const status = statusOf(err);
  if (status >= 500 && !(err instanceof UnavailableError)) {
    req.log.error({ err: err.message, stack: err.stack }, 'request failed');
    void reply.status(500).send({ success: false, message: 'Internal server error' });
    return;
  }
  void reply.status(status).send({ success: false, message: err.code?.startsWith('FST_') ? clientMessage(err) : err.message });
}
