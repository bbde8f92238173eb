import type { FinishedRunStatus } from '../runs/types.ts';

/** A finished pipeline run, as the run lifecycle reports it to metrics and notifications. */
export interface RunOutcome {
  runId: string;
  pipelineId: string;
  /** The Pipeline manifest's name, when the run's pipeline has one. */
  pipelineName?: string;
  clientId?: string;
  status: FinishedRunStatus;
  durationMs: number;
  rowsRead: number;
  rowsWritten: number;
  rowsRejected: number;
  /** Why it failed (names the step and the cause), null otherwise. */
  error: string | null;
  /** The step that failed, when one did. */
  failedStep?: string;
}

/** What the run lifecycle calls once per finished run (ControllerMetrics implements it). */
export interface RunMetrics {
  observe(run: RunOutcome): void;
}
