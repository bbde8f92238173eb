import { listPipelines as listPipelineRows, type PipelineSummary } from '../kinds/pipeline/listing.ts';
import { readPipeline as readPipelineRow, type PipelineView } from '../kinds/pipeline/store.ts';
import type { Store } from '../store/db.ts';
import { readLastRun } from './store.ts';

/**
 * Pipelines as the API shows them: the pipeline kind's rows with their last run, which the runs'
 * table holds (each side reads only its own tables; this is where they meet).
 */
export function readPipeline(db: Store, pipelineId: string, now: Date): PipelineView | undefined {
  return readPipelineRow(db, pipelineId, now, (id) => readLastRun(db, id));
}

export function listPipelines(db: Store, tenants: 'all' | readonly string[], now: Date): PipelineSummary[] {
  return listPipelineRows(db, tenants, now, (id) => readLastRun(db, id));
}
