import type { ApiPipelineView } from '../../generated/schema-types.ts';
import type { Owner } from '../../contract.ts';
import type { Store } from '../../store/db.ts';
import { fromJson } from '../json.ts';
import { nextRunAt } from './schedule.ts';
import type { PipelineDestination, PipelineSchedule, PipelineSource, StepConfig, StepType } from './types.ts';

export interface PipelineRow {
  pipeline_id: string;
  name: string;
  description: string;
  category: string | null;
  tags: string;
  source: string;
  destination: string;
  schedule: string | null;
  status: string;
  manifest_key: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface StepRow {
  step_id: string;
  pipeline_id: string;
  position: number;
  type: StepType;
  name: string;
  status: string;
  config: string;
}

export function readPipelineRow(db: Store, pipelineId: string): PipelineRow | undefined {
  return db.statements.prepare('SELECT * FROM pipelines WHERE pipeline_id = ?').get(pipelineId) as PipelineRow | undefined;
}

export function readStepRows(db: Store, pipelineId: string): StepRow[] {
  return db.statements.prepare('SELECT * FROM pipeline_steps WHERE pipeline_id = ? ORDER BY position').all(pipelineId) as StepRow[];
}

/** The stored pipeline as `GET /v1/sdk/pipelines/{pipelineId}` answers it. */
export type PipelineView = ApiPipelineView;

/** A pipeline's last run: the runs own their table (runs/pipeline-view.ts passes their reader in). */
export type LastRunOf = (pipelineId: string) => PipelineView['lastRun'] | undefined;

/** What a pipeline read and the pipelines list share: where it reads and writes, its schedule, next and last run. */
export function pipelineOutline(row: Pick<PipelineRow, 'pipeline_id' | 'source' | 'destination' | 'schedule' | 'created_at'>, now: Date, lastRun: LastRunOf) {
  const schedule = fromJson<PipelineSchedule | null>(row.schedule, null);
  const next = nextRunAt(schedule, now, new Date(row.created_at));
  return {
    source: fromJson<PipelineSource>(row.source, {} as PipelineSource),
    destination: fromJson<PipelineDestination>(row.destination, {} as PipelineDestination),
    schedule,
    nextRunAt: next ? next.toISOString() : null,
    lastRun: lastRun(row.pipeline_id) ?? null,
  };
}

/** Reads one pipeline with its resolved steps; `now` decides `nextRunAt`. */
export function readPipeline(db: Store, pipelineId: string, now: Date, lastRun: LastRunOf): PipelineView | undefined {
  const row = readPipelineRow(db, pipelineId);
  if (!row) return undefined;
  return {
    pipelineId: row.pipeline_id,
    name: row.name,
    description: row.description,
    category: row.category,
    tags: fromJson<string[]>(row.tags, []),
    status: row.status,
    ...pipelineOutline(row, now, lastRun),
    steps: readStepRows(db, pipelineId).map((s) => ({
      id: s.step_id,
      type: s.type,
      name: s.name,
      status: s.status,
      config: fromJson<StepConfig>(s.config, {}),
    })),
    createdBy: row.created_by,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** A pipeline's stored owner: `undefined` no such pipeline, `null` it belongs to no client. */
export function pipelineOwner(db: Store, pipelineId: string): Owner {
  const row = db.statements.prepare('SELECT owner_client_id FROM pipelines WHERE pipeline_id = ?').get(pipelineId) as { owner_client_id: string | null } | undefined;
  return row ? row.owner_client_id : undefined;
}

/** The client owning the pipeline a manifest defines (null: none). */
export function pipelineManifestOwner(db: Store, key: string): string | null {
  const row = db.statements.prepare('SELECT owner_client_id FROM pipelines WHERE manifest_key = ? LIMIT 1').get(key) as { owner_client_id: string | null } | undefined;
  return row?.owner_client_id ?? null;
}
