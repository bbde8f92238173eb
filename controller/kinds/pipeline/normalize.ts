import type { PipelineDestination, PipelineSource, PipelineSpec, ResolvedStep, StepConfig, StepType } from './types.ts';

/** A step's default name: the label of its type. */
export const STEP_LABELS: Record<StepType, string> = {
  source: 'Source',
  transform: 'Transform',
  validate: 'Validate',
  quality: 'Data Quality',
  db_lookup: 'DB Lookup',
  stage: 'Stage',
  load: 'Load',
  reconcile: 'Reconcile',
};

/** Steps that write to the destination and inherit its connection and schema. */
const DESTINATION_STEPS: ReadonlySet<StepType> = new Set(['load', 'stage', 'reconcile']);

function sourceDefaults(source: PipelineSource): StepConfig {
  return { connectionId: source.connectionId, ...source.config };
}

function destinationDefaults(destination: PipelineDestination): StepConfig {
  return { connectionId: destination.connectionId, ...(destination.schemaName !== undefined ? { schemaName: destination.schemaName } : {}) };
}

/**
 * The stored steps of a pipeline: the generated source step (from the top-level `source`)
 * first, then the supplied steps in order, each named and with its inherited values resolved
 * (a step's own config always wins). `spec` has been validated and has its schema defaults.
 */
export function resolveSteps(spec: PipelineSpec): ResolvedStep[] {
  const generated: ResolvedStep = { type: 'source', name: STEP_LABELS.source, config: sourceDefaults(spec.source) };
  return [
    generated,
    ...spec.steps.map((step): ResolvedStep => {
      const inherited =
        step.type === 'source' ? sourceDefaults(spec.source) : DESTINATION_STEPS.has(step.type) ? destinationDefaults(spec.destination) : {};
      const name = step.name !== undefined && step.name.trim() !== '' ? step.name : STEP_LABELS[step.type];
      return { type: step.type, name, config: { ...inherited, ...step.config } };
    }),
  ];
}

/** Every connection a pipeline uses: source, destination and step overrides. */
export function pipelineConnections(spec: PipelineSpec): string[] {
  const ids = resolveSteps(spec).map((s) => s.config.connectionId);
  return [...new Set([spec.source.connectionId, spec.destination.connectionId, ...ids].filter((id): id is string => typeof id === 'string' && id !== ''))];
}
