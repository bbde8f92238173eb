import { formatProblem } from '../../errors.ts';
import type { SchemaRegistry } from '../../manifest/validator.ts';
import { fieldPath, isPlainObject } from '../../objects.ts';
import type { Problem } from '../../types.ts';
import { cronProblem, DEFAULT_SCHEDULE_MIN_INTERVAL_MS, formatInterval, scheduleGapBelow } from './schedule.ts';
import type { PipelineSpec } from './types.ts';

/** The spec's exact text for a pipeline without a name (docs/contract/api.md §7); always listed first. */
export const NO_NAME = 'Pipeline JSON must include a name.';


export interface SemanticOptions {
  /** BI_SCHEDULE_MIN_INTERVAL: a schedule firing more often is refused. */
  scheduleMinIntervalMs?: number;
}

/**
 * What the schema cannot say: a `regex` rule's pattern must compile, a cron expression must
 * parse, and a schedule may not fire more often than BI_SCHEDULE_MIN_INTERVAL. Tolerates
 * structurally invalid input (the schema reports that), so every problem of a payload is listed
 * at once. `prefix` is `spec` for manifest files.
 */
export function semanticProblems(spec: unknown, prefix = '', opts: SemanticOptions = {}): Problem[] {
  if (!isPlainObject(spec)) return [];
  const problems: Problem[] = [];
  const steps = Array.isArray(spec.steps) ? spec.steps : [];
  steps.forEach((step: unknown, i) => {
    if (!isPlainObject(step) || step.type !== 'validate' || !isPlainObject(step.config) || !Array.isArray(step.config.rules)) return;
    step.config.rules.forEach((rule: unknown, j) => {
      if (!isPlainObject(rule) || rule.rule !== 'regex' || !isPlainObject(rule.params) || typeof rule.params.pattern !== 'string') return;
      try {
        new RegExp(rule.params.pattern);
      } catch (err) {
        const path = fieldPath(prefix, `steps[${i}].config.rules[${j}].params.pattern`);
        problems.push({ path, message: `${path} is not a valid regular expression: ${(err as Error).message}` });
      }
    });
  });
  const schedule = spec.schedule;
  if (isPlainObject(schedule) && schedule.frequency === 'cron' && typeof schedule.cronExpression === 'string' && schedule.cronExpression.trim()) {
    const reason = cronProblem(schedule.cronExpression);
    if (reason) {
      const path = fieldPath(prefix, 'schedule.cronExpression');
      problems.push({ path, message: `${path} is not a valid cron expression: ${reason}` });
    }
  }
  const tooFrequent = scheduleFrequencyProblem(schedule, prefix, opts.scheduleMinIntervalMs ?? DEFAULT_SCHEDULE_MIN_INTERVAL_MS);
  if (tooFrequent) problems.push(tooFrequent);
  return problems;
}

/** A schedule whose fires come closer together than the minimum interval (fair slots, docs/contract/design.md). */
function scheduleFrequencyProblem(schedule: unknown, prefix: string, minMs: number): Problem | undefined {
  if (!isPlainObject(schedule) || typeof schedule.frequency !== 'string') return undefined;
  const cronExpression = typeof schedule.cronExpression === 'string' ? schedule.cronExpression : undefined;
  const gap = scheduleGapBelow({ frequency: schedule.frequency, cronExpression }, minMs);
  if (gap === undefined) return undefined;
  const path = fieldPath(prefix, schedule.frequency === 'cron' ? 'schedule.cronExpression' : 'schedule.frequency');
  return {
    path,
    message: `${path} fires every ${formatInterval(gap)}, more often than once per ${formatInterval(minMs)} (BI_SCHEDULE_MIN_INTERVAL)`,
  };
}

/** Problems from the registry and from `semanticProblems` already name their path, or are whole sentences. */
function sentence(p: Problem): string {
  return p.message.startsWith(p.path) || /^[A-Z]/.test(p.message) ? p.message : formatProblem(p);
}

export type PayloadResult = { ok: true; spec: PipelineSpec } | { ok: false; problems: Problem[]; message: string };

/**
 * Validates an import payload (docs/contract/api.md §2.5): the JSON Schema (defaults filled in on a copy, the
 * caller's object is left as sent) and the semantic checks. The message lists every problem,
 * joined by `; `, the missing-name sentence first.
 */
export function validatePipelinePayload(schemas: SchemaRegistry, body: unknown, opts: SemanticOptions = {}): PayloadResult {
  const copy: unknown = structuredClone(body ?? null);
  const result = isPlainObject(copy)
    ? schemas.validate<PipelineSpec>('pipeline', copy)
    : { ok: false as const, problems: [{ path: 'name', message: NO_NAME }, { path: '', message: 'Pipeline JSON must be an object.' }] };
  const problems = [...(result.ok ? [] : result.problems), ...semanticProblems(copy, '', opts)];
  if (result.ok && problems.length === 0) return { ok: true, spec: result.value };
  problems.sort((a, b) => Number(b.message === NO_NAME) - Number(a.message === NO_NAME));
  return { ok: false, problems, message: problems.map(sentence).join('; ') };
}
