import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../controller/errors.ts';
import { pipelineVisibleTo, runVisibleTo } from '../../controller/runs/access.ts';
import { RunStore, type LogFilter, type RejectFilter, type RunView } from '../../controller/runs/store.ts';
import type { RunStatus } from '../../controller/runs/types.ts';
import { principalOf } from '../auth/principal.ts';
import { pipelineRunRouteSchemas } from '../schemas/pipeline-runs.ts';

/** `?step=&reason=` of the rejected rows (checked at the edge by the route's schema). */
export function rejectFilter(q: { step?: string; reason?: string }): RejectFilter {
  return { step: q.step, reason: q.reason };
}

/** `?level=&step=` of the log lines (checked at the edge by the route's schema). */
export function logFilter(q: { level?: string; step?: string }): LogFilter {
  return { level: q.level, step: q.step };
}

/**
 * Pipeline runs (docs/contract/design.md, "Pipeline runs"): start, read, list, cancel, rejects — API key (A) and,
 * for the UI, the same behind a session with `{userId}` last in the path (S). A pipeline or run
 * the caller may not see answers exactly like an unknown one (404).
 */
export default async function pipelineRunRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;

  const caller = principalOf;

  /** The pipeline of the path, when the caller may see it. */
  function visiblePipeline(req: FastifyRequest): string {
    const { pipelineId } = req.params as { pipelineId: string };
    if (!pipelineVisibleTo(rt.db, rt.authz, caller(req), pipelineId)) throw new NotFoundError(`Pipeline ${pipelineId} not found`);
    return pipelineId;
  }

  /** The run of the path, when the caller may see its pipeline. */
  function visibleRun(req: FastifyRequest): RunView {
    const { runId } = req.params as { runId: string };
    const run = RunStore.isRunId(runId) ? rt.runs.store.get(runId) : undefined;
    if (!run || !runVisibleTo(rt.db, rt.authz, caller(req), run.pipelineId)) throw new NotFoundError(`Run ${runId} not found`);
    return run;
  }

  // The query as its schema checked it, defaults filled in (api/schemas/pipeline-runs.ts).
  const query = (req: FastifyRequest) => req.query as { status?: RunStatus; limit: number; offset: number; step?: string; reason?: string; level?: string };

  const handlers = {
    start: async (req: FastifyRequest, reply: FastifyReply) => {
      const pipelineId = visiblePipeline(req);
      const run = await rt.runs.dispatcher.start(pipelineId, 'api', caller(req).userId);
      return reply.status(202).send({ success: true, run });
    },
    list: async (req: FastifyRequest, reply: FastifyReply) => {
      const pipelineId = visiblePipeline(req);
      const { status, limit } = query(req);
      return reply.status(200).send({ success: true, runs: rt.runs.store.list(pipelineId, { status, limit }) });
    },
    get: async (req: FastifyRequest, reply: FastifyReply) => reply.status(200).send({ success: true, run: visibleRun(req) }),
    cancel: async (req: FastifyRequest, reply: FastifyReply) => {
      const run = visibleRun(req);
      return reply.status(202).send({ success: true, run: await rt.runs.dispatcher.cancel(run.runId) });
    },
    rejects: async (req: FastifyRequest, reply: FastifyReply) => {
      const run = visibleRun(req);
      const { limit, offset } = query(req);
      return reply.status(200).send({ success: true, rejects: rt.runs.store.rejects(run.runId, limit, offset, rejectFilter(query(req))) });
    },
    logs: async (req: FastifyRequest, reply: FastifyReply) => {
      const run = visibleRun(req);
      return reply.status(200).send({ success: true, logs: rt.runs.store.logs(run.runId, query(req).limit, logFilter(query(req))) });
    },
  };

  const routes: [method: 'GET' | 'POST', path: string, handler: (req: FastifyRequest, reply: FastifyReply) => Promise<unknown>, schema: keyof typeof pipelineRunRouteSchemas][] = [
    ['POST', '/v1/sdk/pipelines/:pipelineId/runs', handlers.start, 'startRun'],
    ['GET', '/v1/sdk/pipelines/:pipelineId/runs', handlers.list, 'listRuns'],
    ['GET', '/v1/sdk/pipeline-runs/:runId', handlers.get, 'getRun'],
    ['POST', '/v1/sdk/pipeline-runs/:runId/cancel', handlers.cancel, 'cancelRun'],
    ['GET', '/v1/sdk/pipeline-runs/:runId/rejects', handlers.rejects, 'listRejects'],
    ['GET', '/v1/sdk/pipeline-runs/:runId/logs', handlers.logs, 'listLogs'],
  ];
  // Pipeline endpoints answer failures as `{success:false, message}` (docs/contract/api.md §4.4).
  const config = { errorField: 'message' as const };
  for (const [method, url, handler, schema] of routes) {
    app.route({ method, url, config, handler, schema: pipelineRunRouteSchemas[schema].apiKey });
    // The session variant: `{userId}` last, as the UI's other endpoints.
    app.route({ method, url: `${url}/:userId`, config, handler, schema: pipelineRunRouteSchemas[schema].session });
  }
}
