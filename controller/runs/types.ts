/**
 * The contract between the pipeline engine (steps over a stream of row batches, sources, loads)
 * and the run lifecycle (run records, dispatch, cancel, schedules, routes). Both sides build
 * against this file; neither changes it without the other.
 */
import { RUN_STATUSES } from '../generated/schema-constants.ts';
import type { ApiPipelineRun, ApiRunStepProgress } from '../generated/schema-types.ts';
import type { PipelineDestination, PipelineSource, StepConfig, StepType } from '../kinds/pipeline/types.ts';

/** One row as it flows between steps: field name → value (string, number, boolean, null, Date). */
export type Row = Record<string, unknown>;

/** Rows in source order; a step sees batches, never the whole table. */
export type Batch = Row[];

/** The run's and its steps' states and triggers: the generated API types' (schemas/api.schema.json). */
export type RunStatus = ApiPipelineRun['status'];
export type StepStatus = ApiRunStepProgress['status'];
export type RunTrigger = ApiPipelineRun['trigger'];
/** The statuses a run ends in (what an engine answers). */
export type FinishedRunStatus = Exclude<RunStatus, 'queued' | 'running'>;
/** The run statuses, from the one list in the schema; those a run ends in. */
export { RUN_STATUSES };
export const FINISHED_RUN_STATUSES: readonly FinishedRunStatus[] = RUN_STATUSES.filter((s): s is FinishedRunStatus => s !== 'queued' && s !== 'running');

/** A step of a run as docs/contract/design.md's `run.steps[]` shows it. */
export interface StepProgress {
  stepId: string;
  type: StepType;
  name: string;
  status: StepStatus;
  rowsIn: number;
  rowsOut: number;
  rowsRejected: number;
  durationMs: number;
  message: string | null;
  /** Reconcile steps: the result of each check (`compareRowCounts`, `checkFieldCompleteness`, `screenMapEnabled`). */
  checks?: Record<string, unknown>;
}

/** A row a step refused, with every reason (docs/contract/design.md: rejects are `{step, row, reasons}`). */
export interface RejectedRow {
  /** The refusing step's ID (`step-<digits>-<index>`). */
  step: string;
  row: Row;
  reasons: string[];
}

export type LogLevel = 'info' | 'warn' | 'error';

/** What the engine reports while it runs; the run lifecycle records it. Hooks never throw into the engine. */
export interface RunHooks {
  /** Every status change of a step, and its counts at least once per batch. */
  onStep(progress: StepProgress): void;
  /** Every rejected row (the recorder keeps the first 1,000 per run). */
  onReject(rejected: RejectedRow): void;
  onLog(level: LogLevel, message: string): void;
}

/** A connection with its credential resolved (from `passwordEnv` or the encrypted `secretRef`), never from the pipeline. */
export interface ResolvedConnection {
  connectionId: string;
  vendor: 'POSTGRESQL' | 'SNOWFLAKE';
  host?: string;
  port?: number;
  database?: string;
  schema?: string;
  username?: string;
  password?: string;
  accountUrl?: string;
  warehouse?: string;
  /** A platform connection every tenant may use; its `tenantSchema` pins each tenant's schema (runs/reach.ts). */
  shared?: boolean;
  tenantSchema?: string;
}

export interface ConnectionResolver {
  /** Throws when the connection does not exist or the run's tenant may not use it. */
  resolve(connectionId: string): ResolvedConnection;
}

/** An address a checked host resolved to: the one a connection is made to (never a second resolution). */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Where a pipeline may connect (docs/contract/design.md: never the controller's own address, never 169.254.0.0/16; `BI_PIPELINE_EGRESS` allow-list when set). */
export interface EgressPolicy {
  /** Throws a clear Error when `host:port` may not be reached. Called before every outbound connection. */
  check(host: string, port: number): Promise<void>;
  /**
   * A tenant's endpoint (api and s3 sources, each redirect hop): `check`, and no internal address
   * (loopback, private, CGNAT, ULA…) unless `BI_PIPELINE_EGRESS` lists the host. Answers the
   * checked addresses: the caller connects to these.
   */
  endpoint(host: string, port: number): Promise<ResolvedAddress[]>;
}

/** A stored step with its ID, as `readPipeline` answers it (config inherited from source/destination). */
export interface RunStep {
  id: string;
  type: StepType;
  name: string;
  config: StepConfig;
}

export interface EngineInput {
  runId: string;
  pipelineId: string;
  source: PipelineSource;
  destination: PipelineDestination;
  /** In order, the generated source step first. */
  steps: RunStep[];
  connections: ConnectionResolver;
  egress: EgressPolicy;
  /** `BI_PIPELINE_FILES_DIR`: file sources read only below it (an owned pipeline only below its client's folder). */
  filesDir: string;
  /** The client owning the pipeline; null or absent: unowned (admin-only), nothing pinned (runs/reach.ts). */
  owner?: string | null;
  /** Aborted on cancel: the engine stops, rolls back any open load and answers `cancelled`. */
  signal: AbortSignal;
  hooks: RunHooks;
  now: () => Date;
}

export interface EngineResult {
  status: FinishedRunStatus;
  rowsRead: number;
  rowsWritten: number;
  rowsRejected: number;
  /** Why a run failed (names the step and the cause), null otherwise. */
  error: string | null;
  steps: StepProgress[];
}

/** Runs one pipeline once. Never throws: every failure is an `EngineResult` with `status: 'failed'`. */
export interface PipelineEngine {
  run(input: EngineInput): Promise<EngineResult>;
}

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
