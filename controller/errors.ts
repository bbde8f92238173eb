import type { Problem, ReconcileResult } from './contract.ts';

/** Domain errors. The API maps each class to a status code in one place (api/errors.ts). */

/** Fields a failure adds to its error body beside the message (e.g. the FAILED client of an onboarding). */
export type ErrorDetails = Record<string, unknown>;

/** Input that does not satisfy the schemas or the semantic rules; carries every problem found. */
export class ValidationError extends Error {
  readonly problems: Problem[];
  constructor(problems: Problem[], message?: string) {
    super(message ?? problems.map(formatProblem).join('; '));
    this.name = 'ValidationError';
    this.problems = problems;
  }
}

/** A step of an apply failed; the transaction is rolled back and the manifest is retried. */
export class StepError extends Error {
  readonly step: string;
  readonly reason: string;
  readonly details: ErrorDetails;
  constructor(step: string, reason: string, details: ErrorDetails = {}) {
    super(`${step}: ${reason}`);
    this.name = 'StepError';
    this.step = step;
    this.reason = reason;
    this.details = details;
  }
}

export class NotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NotFoundError';
  }
}

export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

export class ForbiddenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ForbiddenError';
  }
}

/** A manifest was written and reconciled but did not apply (Failed); it was withdrawn again. */
export class ApplyFailedError extends Error {
  readonly result: ReconcileResult;
  readonly details: ErrorDetails;
  constructor(result: ReconcileResult, message: string = result.message, details: ErrorDetails = {}) {
    super(message);
    this.name = 'ApplyFailedError';
    this.result = result;
    this.details = details;
  }
}

/** No caller could be established for a request that needs one. */
export class UnauthenticatedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnauthenticatedError';
  }
}

/** What the API would write is larger than its own loader accepts (nothing was written). */
export class TooLargeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TooLargeError';
  }
}

/** The desired state could not be recorded (git push refused, disk full); nothing was applied. */
export class UnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnavailableError';
  }
}

/**
 * Error codes of a store or disk that cannot take a write now (full, over its file-size limit,
 * busy, read-only, failing I/O): the request is not done and may be retried — never a bug (500).
 */
const STORAGE_FAULT = /^(ENOSPC|EFBIG|EDQUOT|EROFS|EIO|SQLITE_(FULL|BUSY|LOCKED|READONLY|IOERR|CANTOPEN)(_\w+)?)$/;

/** Whether `err` is a store or disk that cannot take a write now (see STORAGE_FAULT). */
export function isStorageFault(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && STORAGE_FAULT.test(code);
}

/** The text answered for a storage fault: what happened, and that nothing is owed but a retry. */
export function storageFaultMessage(err: unknown): string {
  return `The store cannot take writes now (${boundMessage((err as Error).message)}); retry later`;
}

export function formatProblem(p: Problem): string {
  const where = p.line === undefined ? '' : p.column === undefined ? ` (line ${p.line})` : ` (line ${p.line}, column ${p.column})`;
  if (!p.path) return `${p.message}${where}`;
  return p.message.startsWith(p.path) ? `${p.message}${where}` : `${p.path} ${p.message}${where}`;
}

/** Stored messages are bounded, so one pathological error cannot bloat the status table. */
export function boundMessage(message: string, max = 2000): string {
  return message.length <= max ? message : `${message.slice(0, max - 1)}…`;
}
