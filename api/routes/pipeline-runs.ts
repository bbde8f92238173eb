import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { NotFoundError, ValidationError } from '../../controller/errors.ts';
import { pipelineVisibleTo, runVisibleTo } from '../../controller/runs/access.ts';
import { MAX_REJECTS_KEPT, RunStore, type LogFilter, type RejectFilter, type RunView } from '../../controller/runs/store.ts';
import type { RunStatus } from '../../controller/runs/types.ts';
import { requireApiKey, requireSession } from '../auth/guards.ts';
import { principalOf } from '../auth/principal.ts';
import { pipelineRunRouteSchemas } from '../schemas/pipeline-runs.ts';
import { LIMITS, RUN_STATUS_VALUES } from './pipeline-runs.schemas.ts';

/** A query integer `field` in min..max (`fallback` when absent); 400 naming the field otherwise. */
function queryInt(raw: unknown, field: string, min: number, max: number, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isInteger(n) || n < min || n > max) throw new ValidationError([{ path: field, message: `must be an integer from ${min} to ${max}` }]);
  return n;
}

/** `?limit=` as an integer 1..max (the default when absent); 400 naming the field otherwise. */
export function parseLimit(raw: unknown, bounds: { default: number; max: number }): number {
  return queryInt(raw, 'limit', 1, bounds.max, bounds.default);
}

/** `?offset=` as an integer 0..max (0 when absent). */
export function parseOffset(raw: unknown, max: number): number {
  return queryInt(raw, 'offset', 0, max, 0);
}

/** An optional text filter of at most 200 characters; 400 naming the field otherwise. */
function queryText(raw: unknown, field: string): string | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || raw.length > 200) throw new ValidationError([{ path: field, message: 'must be a text of at most 200 characters' }]);
  return raw;
}

/** `?step=&reason=` of the rejected rows. */
export function rejectFilter(q: Record<string, unknown>): RejectFilter {
  return { step: queryText(q.step, 'step'), reason: queryText(q.reason, 'reason') };
}

/** `?level=&step=` of the log lines. */
export function logFilter(q: Record<string, unknown>): LogFilter {
  const level = queryText(q.level, 'level');
  if (level !== undefined && !LOG_LEVELS.includes(level)) throw new ValidationError([{ path: 'level', message: `must be one of ${LOG_LEVELS.join(', ')}` }]);
  return { level, step: queryText(q.step, 'step') };
}

const LOG_LEVELS = ['info', 'warn', 'error'];

export function parseRunStatus(raw: unknown): RunStatus | undefined {
  if (raw === undefined || raw === '') return undefined;
  if (typeof raw !== 'string' || !(RUN_STATUS_VALUES as readonly string[]).includes(raw)) {
    throw new ValidationError([{ path: 'status', message: `must be one of ${RUN_STATUS_VALUES.join(', ')}` }]);
  }
  return raw as RunStatus;
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

  const query = (req: FastifyRequest) => (req.query ?? {}) as Record<string, unknown>;

  const handlers = {
    start: async (req: FastifyRequest, reply: FastifyReply) => {
      const pipelineId = visiblePipeline(req);
      const run = await rt.runs.dispatcher.start(pipelineId, 'api', caller(req).userId);
      return reply.status(202).send({ success: true, run });
    },
    list: async (req: FastifyRequest, reply: FastifyReply) => {
      const pipelineId = visiblePipeline(req);
      const status = parseRunStatus(query(req).status);
      const limit = parseLimit(query(req).limit, LIMITS.runs);
      return reply.status(200).send({ success: true, runs: rt.runs.store.list(pipelineId, { status, limit }) });
    },
    get: async (req: FastifyRequest, reply: FastifyReply) => reply.status(200).send({ success: true, run: visibleRun(req) }),
    cancel: async (req: FastifyRequest, reply: FastifyReply) => {
      const run = visibleRun(req);
      return reply.status(202).send({ success: true, run: await rt.runs.dispatcher.cancel(run.runId) });
    },
    rejects: async (req: FastifyRequest, reply: FastifyReply) => {
      const run = visibleRun(req);
      const limit = parseLimit(query(req).limit, LIMITS.rejects);
      const offset = parseOffset(query(req).offset, MAX_REJECTS_KEPT);
      return reply.status(200).send({ success: true, rejects: rt.runs.store.rejects(run.runId, limit, offset, rejectFilter(query(req))) });
    },
    logs: async (req: FastifyRequest, reply: FastifyReply) => {
      const run = visibleRun(req);
      const limit = parseLimit(query(req).limit, LIMITS.logs);
      return reply.status(200).send({ success: true, logs: rt.runs.store.logs(run.runId, limit, logFilter(query(req))) });
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
  const apiKey: preHandlerAsyncHookHandler = requireApiKey(app);
  const session: preHandlerAsyncHookHandler = requireSession(app);
  // Pipeline endpoints answer failures as `{success:false, message}` (docs/contract/api.md §4.4).
  const config = { errorField: 'message' as const };
  for (const [method, url, handler, schema] of routes) {
    app.route({ method, url, preHandler: apiKey, config, handler, schema: pipelineRunRouteSchemas[schema].apiKey });
    // The session variant: `{userId}` last, as the UI's other endpoints.
    app.route({ method, url: `${url}/:userId`, preHandler: session, config, handler, schema: pipelineRunRouteSchemas[schema].session });
  }
}
