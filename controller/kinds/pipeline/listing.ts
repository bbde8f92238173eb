import type { ApiPipelineSummary } from '../../generated/schema-types.ts';
import type { Store } from '../../store/db.ts';
import { pipelineOutline, type LastRunOf } from './store.ts';

export type PipelineSummary = ApiPipelineSummary;

interface Row {
  pipeline_id: string;
  name: string;
  description: string;
  status: string;
  source: string;
  destination: string;
  schedule: string | null;
  owner_client_id: string | null;
  manifest_key: string | null;
  created_at: string;
  steps: number;
}

/**
 * The pipelines list of the settings UI: each with its owner, schedule, next and last run.
 * `tenants` narrows it to the pipelines those clients own ('all': every pipeline).
 */
export function listPipelines(db: Store, tenants: 'all' | readonly string[], now: Date, lastRun: LastRunOf): PipelineSummary[] {
  if (tenants !== 'all' && tenants.length === 0) return [];
  const where = tenants === 'all' ? '' : `WHERE p.owner_client_id IN (${tenants.map(() => '?').join(', ')})`;
  const rows = db
    .prepare(
      `SELECT p.pipeline_id, p.name, p.description, p.status, p.source, p.destination, p.schedule, p.owner_client_id, p.manifest_key, p.created_at,
         (SELECT COUNT(*) FROM pipeline_steps s WHERE s.pipeline_id = p.pipeline_id) AS steps
       FROM pipelines p ${where} ORDER BY p.name COLLATE NOCASE, p.pipeline_id`,
    )
    .all(...(tenants === 'all' ? [] : tenants)) as Row[];
  return rows.map((r) => ({
    pipelineId: r.pipeline_id,
    name: r.name,
    description: r.description,
    status: r.status,
    owner: r.owner_client_id,
    manifestKey: r.manifest_key,
    stepCount: r.steps,
    ...pipelineOutline(r, now, lastRun),
  }));
}
