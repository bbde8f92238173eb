import type { Principal } from '../auth/principal.ts';
import { ApplyFailedError, ConflictError, NotFoundError, ValidationError } from '../errors.ts';
import { readPipelineRow } from '../kinds/pipeline/store.ts';
import { validatePipelinePayload } from '../kinds/pipeline/validate.ts';
import { readPipeline } from '../runs/pipeline-view.ts';
import type { Config } from '../config.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { Store } from '../store/db.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import type { Clock, Manifest } from '../types.ts';
import { definingFile, withoutActor, type DefiningFilePorts } from './manifest-file.ts';

/** What a schedule edit needs of the controller. */
export interface PipelineSchedulePorts extends DefiningFilePorts {
  readonly db: Store;
  readonly clock: Clock;
  readonly config: Pick<Config, 'scheduleMinIntervalMs'>;
  readonly locks: KeyedMutex;
  readonly submitter: Pick<ManifestSubmitter, 'submit'>;
}

/** The fields of `spec.schedule` the console edits; null removes one. */
export const SCHEDULE_FIELDS = ['isEnabled', 'frequency', 'cronExpression', 'startDate', 'startTime'] as const;
export type SchedulePatch = Partial<Record<(typeof SCHEDULE_FIELDS)[number], unknown>>;

/**
 * A pipeline's schedule changed from the console (docs/pipelines.md, "Schedules"): its manifest
 * rewritten with the new `spec.schedule` through the one write path. Pause is `isEnabled: false`
 * (the scheduler fires nothing, manual runs still start), resume `isEnabled: true`. The new
 * schedule is checked as an import is (BI_SCHEDULE_MIN_INTERVAL: 400 naming
 * `schedule.cronExpression`) before anything is written.
 */
export class PipelineSchedule {
  readonly #rt: PipelineSchedulePorts;

  constructor(opts: { runtime: PipelineSchedulePorts }) {
    this.#rt = opts.runtime;
  }

  async update(pipelineId: string, patch: SchedulePatch, caller: Principal): Promise<ReturnType<typeof readPipeline>> {
    const rt = this.#rt;
    const row = readPipelineRow(rt.db, pipelineId);
    if (!row) throw new NotFoundError(`Pipeline ${pipelineId} not found`);
    const key = row.manifest_key;
    if (!key) throw new ConflictError(`Pipeline ${pipelineId} has no manifest`);
    const { path, manifest: current } = definingFile(rt, key, `Pipeline ${pipelineId}`);
    const schedule: Record<string, unknown> = { ...((current.spec as { schedule?: Record<string, unknown> }).schedule ?? {}) };
    for (const [k, v] of Object.entries(patch)) {
      if (v === null) delete schedule[k];
      else schedule[k] = v;
    }
    const spec = { ...current.spec, schedule };
    const checked = validatePipelinePayload(rt.schemas, spec, { scheduleMinIntervalMs: rt.config.scheduleMinIntervalMs });
    if (!checked.ok) throw new ValidationError(checked.problems, checked.message);
    const manifest: Manifest = { ...withoutActor(current), spec };
    const verb = patch.isEnabled === false ? 'pause' : patch.isEnabled === true ? 'resume' : 'reschedule';
    return rt.locks.run(key, async () => {
      const result = await rt.submitter.submit({ relPath: path, manifest, caller, message: `${verb} pipeline ${row.name}`, withdrawOnFailure: false });
      if (result.phase !== 'Synced') {
        await rt.submitter.submit({ relPath: path, manifest: current, caller, message: `restore pipeline ${row.name}: the schedule change did not apply`, withdrawOnFailure: false });
        throw new ApplyFailedError(result, result.message || `${key} is ${result.phase}`);
      }
      return readPipeline(rt.db, pipelineId, rt.clock());
    });
  }
}
