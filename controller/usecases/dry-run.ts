import { boundMessage, formatProblem, StepError, ValidationError, type ErrorDetails } from '../errors.ts';
import { checkDocument } from '../manifest/loader.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { DryRunFailure, Reconciler } from '../reconciler/reconciler.ts';
import type { Manifest, ResourceRefs } from '../types.ts';

/**
 * "What would happen" for the API: every `dryRun=true` and pre-check goes through the reconciler's
 * one dry run (the real checks and apply in a transaction that always rolls back), and answers its
 * refusals alike: the phases of the real path, their texts.
 */

/** A refusal of the dry run as the API answers it: 422, `<step>: <reason>` (what the real apply's Failed status reads). */
export function dryRunRefusal(failure: DryRunFailure, details: ErrorDetails = {}): StepError {
  return new StepError(failure.step, failure.reason, details);
}

/**
 * The dry run of one document as the API would submit it: validated against the schemas (defaults
 * filled in; Invalid is the real path's 400 with the reconciler's text), then applied and rolled
 * back. Answers the IDs the apply gave, or throws its refusal (`details` added to the 422 body).
 */
export function dryRunDocument(
  ports: { schemas: SchemaRegistry; reconciler: Pick<Reconciler, 'dryRun'> },
  relPath: string,
  document: Manifest,
  opts: { actor: string; details?: ErrorDetails },
): ResourceRefs {
  const checked = checkDocument(relPath, '', structuredClone(document), ports.schemas);
  if (!checked.ok) throw new ValidationError([], boundMessage(checked.problems.map(formatProblem).join('; ')));
  const result = ports.reconciler.dryRun([{ key: checked.key, manifest: checked.manifest }], { actor: opts.actor }).get(checked.key);
  if (!result) throw new Error(`dry run of ${checked.key} answered nothing`);
  if (!result.ok) throw dryRunRefusal(result, opts.details);
  return result.resourceIds;
}
