import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Problem } from '../controller/types.ts';
import {
  ApplyFailedError,
  ConflictError,
  ForbiddenError,
  isStorageFault,
  NotFoundError,
  StepError,
  TooLargeError,
  UnauthenticatedError,
  UnavailableError,
  ValidationError,
  storageFaultMessage,
  type ErrorDetails,
} from '../controller/errors.ts';

/**
 * The member of an error body that carries the text: docs/contract/api.md §4.4's pipeline endpoints answer
 * `{success:false, message}`, every other endpoint `{success:false, error}`. A route picks its
 * variant with `config: { errorField: 'message' }`.
 */
export type ErrorField = 'error' | 'message';

declare module 'fastify' {
  interface FastifyContextConfig {
    errorField?: ErrorField;
  }
}

/** Every domain error → HTTP status, in one place. */
export function statusOf(err: unknown): number {
  if (err instanceof ValidationError) return 400;
  if (err instanceof UnauthenticatedError) return 401;
  if (err instanceof ForbiddenError) return 403;
  if (err instanceof NotFoundError) return 404;
  if (err instanceof ConflictError) return 409;
  if (err instanceof TooLargeError) return 413;
  if (err instanceof ApplyFailedError) return err.result.reason === 'store' ? 503 : 422;
  if (err instanceof StepError) return 422;
  if (err instanceof UnavailableError) return 503;
  // A full disk or a busy store (SQLITE_FULL, ENOSPC, EFBIG, …) anywhere, key creation included: not done, retry.
  if (isStorageFault(err)) return 503;
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

/**
 * The machine-readable kind of a request the server could not take as sent (400, 413, 415):
 * schemas/api.schema.json `ErrorCode`, listed in docs/api.md. Other failures carry none.
 */
export type ErrorCode = 'validation' | 'malformed_json' | 'empty_body' | 'body_too_large' | 'unsupported_media_type' | 'bad_request';

const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'malformed_json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'empty_body',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body_too_large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'unsupported_media_type',
};

/** The `code` of an error's body, when it has one. */
export function codeOf(err: unknown, status: number = statusOf(err)): ErrorCode | undefined {
  if (err instanceof ValidationError) return 'validation';
  const code = (err as Partial<FastifyError>).code;
  if (typeof code === 'string' && FASTIFY_CODES[code]) return FASTIFY_CODES[code];
  return status === 400 ? 'bad_request' : undefined;
}

/** A problem's message without its path in front (`password is required` → `is required`): the path is its own member. */
function ownMessage(p: Problem): Problem {
  return p.path && p.message.startsWith(`${p.path} `) ? { ...p, message: p.message.slice(p.path.length + 1) } : p;
}

/** What a failure adds beside its text: a step's details, or the code and the problems of a bad request. */
function detailsOf(err: unknown, status: number): ErrorDetails {
  if (err instanceof ApplyFailedError || err instanceof StepError) return err.details;
  const code = codeOf(err, status);
  if (!code) return {};
  return err instanceof ValidationError ? { code, problems: err.problems.map(ownMessage) } : { code };
}

/** The body of a failure: `{success:false, <field>: text, code?, problems?, ...details}`. */
export function errorBody(err: unknown, field: ErrorField): Record<string, unknown> {
  const e = err as FastifyError;
  const text = typeof e.code === 'string' && e.code.startsWith('FST_') ? clientMessage(e) : e.message;
  // An unauthenticated API-key call answers as docs/contract/api.md §7 shows: `{error}` alone.
  if (err instanceof UnauthenticatedError && text === 'API key required') return { error: text };
  return { success: false, [field]: text, ...detailsOf(err, statusOf(err)) };
}

/** The one error handler: maps any error of any route to its status and body. */
export function errorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  const status = statusOf(err);
  const field = req.routeOptions.config?.errorField ?? 'error';
  if (isStorageFault(err) && !(err instanceof UnavailableError)) {
    req.log.warn({ err: err.message, code: err.code }, 'storage fault');
    void reply.status(503).send({ success: false, [field]: storageFaultMessage(err) });
    return;
  }
  if (status >= 500 && !(err instanceof UnavailableError) && !(err instanceof ApplyFailedError)) {
    req.log.error({ err: err.message, stack: err.stack }, 'request failed');
    void reply.status(500).send({ success: false, [field]: 'Internal server error' });
    return;
  }
  void reply.status(status).send(errorBody(err, field));
}

export function notFoundHandler(req: FastifyRequest, reply: FastifyReply): void {
  void reply.status(404).send({ success: false, error: `Route ${req.method} ${req.url.split('?')[0]} not found` });
}
