/** Shapes of the pipeline import payload (spec 2.5) after schema validation and defaults. */

export type SourceType = 'api' | 'database' | 'file' | 's3';
export type StepType = 'source' | 'transform' | 'validate' | 'quality' | 'db_lookup' | 'stage' | 'load' | 'reconcile';
export type Frequency = 'once' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'cron';

export type StepConfig = Record<string, unknown>;

export interface PipelineSource {
  connectionId: string;
  type: SourceType;
  config?: StepConfig;
}

export interface PipelineDestination {
  connectionId: string;
  type: 'database';
  vendor: string;
  schemaName?: string;
}

export interface PipelineStepSpec {
  type: StepType;
  name?: string;
  config: StepConfig;
}

export interface PipelineSchedule {
  isEnabled: boolean;
  frequency?: Frequency;
  cronExpression?: string;
  /** ISO date `YYYY-MM-DD` (UTC). */
  startDate?: string;
  /** `HH:MM` (UTC). */
  startTime?: string;
}

export interface PipelineSpec {
  name: string;
  description?: string;
  category?: string;
  tags?: string[];
  source: PipelineSource;
  destination: PipelineDestination;
  steps: PipelineStepSpec[];
  schedule?: PipelineSchedule;
}

/** A step as stored: its name defaulted, its config with the inherited values filled in. */
export interface ResolvedStep {
  type: StepType;
  name: string;
  config: StepConfig;
}
