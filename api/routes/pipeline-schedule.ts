import type { FastifyInstance } from 'fastify';
import { pipelineOwner } from '../../controller/kinds/pipeline/store.ts';
import { NotFoundError, ValidationError } from '../../controller/errors.ts';
import { PipelineSchedule, SCHEDULE_FIELDS, type SchedulePatch } from '../../controller/usecases/pipeline-schedule.ts';
import { principalOf } from '../auth/principal.ts';
import { pipelineScheduleSchemas } from '../schemas/pipelines.ts';

/** The body of a schedule change: known fields only, at least one. */
function scheduleBody(body: unknown): SchedulePatch {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError([{ path: '', message: 'Request body must be a JSON object' }]);
  const b = body as Record<string, unknown>;
  const unknown = Object.keys(b).filter((k) => !(SCHEDULE_FIELDS as readonly string[]).includes(k));
  if (unknown.length) throw new ValidationError(unknown.map((k) => ({ path: `schedule.${k}`, message: `is not a schedule field (${SCHEDULE_FIELDS.join(', ')})` })));
  if (Object.keys(b).length === 0) throw new ValidationError([{ path: 'schedule', message: `needs at least one of ${SCHEDULE_FIELDS.join(', ')}` }]);
  return b;
}

/** Schedule edit, pause and resume of a pipeline from the console (S, admin). */
export default async function pipelineScheduleRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;
  const schedules = new PipelineSchedule({ runtime: rt });

  app.patch<{ Params: { pipelineId: string } }>(
    '/v1/bi/admin/pipelines/:pipelineId/schedule/:userId',
    { schema: pipelineScheduleSchemas.update },
    async (req) => {
      const { pipelineId } = req.params;
      const view = await schedules.update(pipelineId, scheduleBody(req.body), principalOf(req));
      if (!view) throw new NotFoundError(`Pipeline ${pipelineId} not found`);
      return { success: true, data: { ...view, owner: pipelineOwner(rt.db, pipelineId) ?? null } };
    },
  );
}
