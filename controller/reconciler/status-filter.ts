import { PHASES } from '../generated/schema-constants.ts';
import { ValidationError } from '../errors.ts';
import type { Phase, Problem } from '../types.ts';
import type { StatusFilter } from './status.ts';

export { PHASES };

/** Checks a `kind` / `phase` filter of `bictl status` (the API's query is checked by its route schema); ValidationError naming the allowed values. */
export function parseStatusFilter(query: { kind?: string; phase?: string }, kinds: readonly string[]): StatusFilter {
  const problems: Problem[] = [];
  if (query.kind !== undefined && !kinds.includes(query.kind)) {
    problems.push({ path: 'kind', message: `kind must be one of ${kinds.join(', ')}` });
  }
  if (query.phase !== undefined && !(PHASES as readonly string[]).includes(query.phase)) {
    problems.push({ path: 'phase', message: `phase must be one of ${PHASES.join(', ')}` });
  }
  if (problems.length) throw new ValidationError(problems);
  return { ...(query.kind !== undefined ? { kind: query.kind } : {}), ...(query.phase !== undefined ? { phase: query.phase as Phase } : {}) };
}
