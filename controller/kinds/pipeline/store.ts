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
  const row = db.statements.prepare('SELECT owner_client_id FROM pipelines WHERE manifest_key = ? AND owner_client_id IS NOT NULL LIMIT 1').get(key) as { owner_client_id: string | null } | undefined;
  return row?.owner_client_id ?? null;
}

/** The pipelines on each connection (source, destination or a step's override), by name then ID. */
export function pipelinesByConnection(db: Store): Map<string, { pipelineId: string; name: string }[]> {
  const links = new Map<string, Map<string, string>>();
  const rows = db.statements
    .prepare(
      `SELECT p.pipeline_id, p.name, json_extract(p.source, '$.connectionId') AS connection_id FROM pipelines p
       UNION SELECT p.pipeline_id, p.name, json_extract(p.destination, '$.connectionId') FROM pipelines p
       UNION SELECT p.pipeline_id, p.name, json_extract(s.config, '$.connectionId') FROM pipeline_steps s JOIN pipelines p ON p.pipeline_id = s.pipeline_id
       ORDER BY 2, 1`,
    )
    .all() as { pipeline_id: string; name: string; connection_id: unknown }[];
  for (const r of rows) {
    if (typeof r.connection_id !== 'string' || !r.connection_id) continue;
    const m = links.get(r.connection_id) ?? new Map<string, string>();
    m.set(r.pipeline_id, r.name);
    links.set(r.connection_id, m);
  }
  return new Map([...links].map(([id, m]) => [id, [...m].map(([pipelineId, name]) => ({ pipelineId, name }))]));
}

/** A pipeline by its ID (`DP-…`) or its manifest name (`metadata.name`). */
export function findPipelineId(db: Store, ref: string): string | undefined {
  const row = db.statements
    .prepare('SELECT pipeline_id FROM pipelines WHERE pipeline_id = ? OR manifest_key = ? ORDER BY pipeline_id = ? DESC LIMIT 1')
    .get(ref, `Pipeline/${ref}`, ref) as { pipeline_id: string } | undefined;
  return row?.pipeline_id;
}

/** The pipelines a client owns, by ID. */
export function pipelineIdsOwnedBy(db: Store, clientId: string): string[] {
  return (db.statements.prepare('SELECT pipeline_id FROM pipelines WHERE owner_client_id = ? ORDER BY pipeline_id').all(clientId) as { pipeline_id: string }[]).map((r) => r.pipeline_id);
}

/** Every pipeline with a schedule: what the scheduler looks at. */
export function scheduledPipelines(db: Store): { pipelineId: string; schedule: string; createdAt: string }[] {
  return (db.statements.prepare('SELECT pipeline_id, schedule, created_at FROM pipelines WHERE schedule IS NOT NULL').all() as { pipeline_id: string; schedule: string; created_at: string }[]).map(
    (r) => ({ pipelineId: r.pipeline_id, schedule: r.schedule, createdAt: r.created_at }),
  );
}

/** The manifests of the pipelines a client owns (Pipeline manifests only). */
export function pipelineManifestsOwnedBy(db: Store, clientId: string): string[] {
  return (db.statements.prepare("SELECT manifest_key FROM pipelines WHERE owner_client_id = ? AND manifest_key LIKE 'Pipeline/%'").all(clientId) as { manifest_key: string }[]).map((r) => r.manifest_key);
}

/** Whether a pipeline of another owner than `owner` names the connection as its source or destination. */
export function pipelineOfAnotherOwnerOn(db: Store, connectionId: string, owner: string): boolean {
  return (
    db.statements
      .prepare('SELECT 1 FROM pipelines WHERE owner_client_id IS NOT ? AND (instr(source, ?) > 0 OR instr(destination, ?) > 0) LIMIT 1')
      .get(owner, connectionId, connectionId) !== undefined
  );
}

/** Deletes the pipelines a client owns (their steps go with them). */
export function deletePipelinesOwnedBy(db: Store, clientId: string): void {
  db.statements.prepare('DELETE FROM pipelines WHERE owner_client_id = ?').run(clientId);
}
