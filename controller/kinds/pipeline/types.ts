import type { Pipeline, PipelineDestination, PipelineSchedule, PipelineSource, PipelineStep } from '../../generated/schema-types.ts';

/** Shapes of the pipeline import payload (docs/contract/api.md §2.5) after schema validation and defaults, from schemas/pipeline.schema.json. */

export type { PipelineDestination, PipelineSchedule, PipelineSource };
export type PipelineSpec = Pipeline;
export type SourceType = PipelineSource['type'];
export type StepType = PipelineStep['type'];
export type StepConfig = Record<string, unknown>;

/** A step as stored: its name defaulted, its config with the inherited values filled in. */
export interface ResolvedStep {
  type: StepType;
  name: string;
  config: StepConfig;
}
