import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError, NotFoundError } from '../../controller/errors.ts';
import { QueueRunDispatcher, type ProgressReport } from '../../controller/runs/queue/dispatcher.ts';
import type { Heartbeat } from '../../controller/runs/queue/registry.ts';
import { RunStore } from '../../controller/runs/store.ts';
import { FINISHED_RUN_STATUSES, type EngineResult } from '../../controller/runs/types.ts';
import { workerSchemas } from '../schemas/workers.ts';

/** A worker's progress report carries up to 1,000 rejected rows: more than the API's body limit. */
const REPORT_BODY_LIMIT = 32 * 1024 * 1024;

type Body = Record<string, unknown>;

function bad(path: string, message: string): never {
  throw new ValidationError([{ path, message }]);
}
const str = (b: Body, field: string, max = 200): string => {
  const v = b[field];
  if (typeof v !== 'string' || v.length === 0 || v.length > max) bad(field, `must be a string of 1 to ${max} characters`);
  return v;
};
const int = (b: Body, field: string, min = 0): number => {
  const v = b[field];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min) bad(field, `must be an integer ≥ ${min}`);
  return v;
};
const arr = <T>(b: Body, field: string, optional = false): T[] | undefined => {
  const v = b[field];
  if (v === undefined && optional) return undefined;
  if (!Array.isArray(v)) bad(field, 'must be an array');
  return v as T[];
};

/**
 * Queue mode's worker reports (README "Runs on more than one machine"): heartbeat, claim,
 * progress and outcome of runs executed by `bictl worker`, each authenticated with
 * `Authorization: Bearer <BI_WORKER_TOKEN>` (their schemas' `auth: 'worker'`, checked by the guard) —
 * the workers' only way into the store. And
 * `GET /v1/reconciler/workers` for admins.
 */
export default async function workerRoutes(app: FastifyInstance): Promise<void> {
  const rt = app.runtime;

  app.get('/v1/reconciler/workers', { schema: workerSchemas.list }, async () => {
    const d = rt.runs.dispatcher;
    const queued = d instanceof QueueRunDispatcher;
    return { success: true as const, mode: queued ? ('queue' as const) : ('in-process' as const), workers: queued ? d.workers.list() : [] };
  });

  /** The dispatcher (the worker token was checked by the route's guard); 409 outside queue mode. */
  function queue(_req: FastifyRequest, reply: FastifyReply): QueueRunDispatcher | undefined {
    const d = rt.runs.dispatcher;
    if (!(d instanceof QueueRunDispatcher)) {
      void reply.status(409).send({ success: false, error: 'The controller is not in queue mode (BI_QUEUE_URL is not set)' });
      return undefined;
    }
    return d;
  }
  const body = (req: FastifyRequest): Body => {
    const b = req.body;
    if (!b || typeof b !== 'object' || Array.isArray(b)) bad('body', 'must be a JSON object');
    return b as Body;
  };
  const runIdOf = (req: FastifyRequest): string => {
    const { runId } = req.params as { runId: string };
    if (!RunStore.isRunId(runId) || !rt.runs.store.get(runId)) throw new NotFoundError(`Run ${runId} not found`);
    return runId;
  };
  const opts = (schema: (typeof workerSchemas)[keyof typeof workerSchemas]) => ({ schema, bodyLimit: REPORT_BODY_LIMIT });

  app.post('/v1/workers/heartbeat', opts(workerSchemas.heartbeat), async (req, reply) => {
    const d = queue(req, reply);
    if (!d) return reply;
    const b = body(req);
    const running = arr<unknown>(b, 'running') as unknown[];
    if (!running.every((r) => typeof r === 'string' && RunStore.isRunId(r))) bad('running', 'must be an array of run IDs');
    const h: Heartbeat = { name: str(b, 'name'), version: str(b, 'version', 100), concurrency: int(b, 'concurrency', 1), running: running as string[] };
    d.heartbeat(h);
    return reply.status(200).send({ success: true });
  });

  app.post('/v1/workers/runs/:runId/claim', opts(workerSchemas.claim), async (req, reply) => {
    const d = queue(req, reply);
    if (!d) return reply;
    const runId = runIdOf(req);
    return reply.status(200).send({ success: true, claimed: d.claim(runId, str(body(req), 'worker')) });
  });

  app.post('/v1/workers/runs/:runId/progress', opts(workerSchemas.progress), async (req, reply) => {
    const d = queue(req, reply);
    if (!d) return reply;
    const runId = runIdOf(req);
    const b = body(req);
    const report: ProgressReport = { steps: arr(b, 'steps', true), rejects: arr(b, 'rejects', true), logs: arr(b, 'logs', true) };
    return reply.status(200).send({ success: true, ...d.progress(runId, str(b, 'worker'), report) });
  });

  app.post('/v1/workers/runs/:runId/finish', opts(workerSchemas.finish), async (req, reply) => {
    const d = queue(req, reply);
    if (!d) return reply;
    const runId = runIdOf(req);
    const b = body(req);
    const worker = str(b, 'worker');
    const r = b.result;
    if (!r || typeof r !== 'object' || Array.isArray(r)) bad('result', 'must be an object');
    const rb = r as Body;
    if (!(FINISHED_RUN_STATUSES as readonly unknown[]).includes(rb.status)) bad('result.status', `must be one of ${FINISHED_RUN_STATUSES.join(', ')}`);
    const result: EngineResult = {
      status: rb.status as EngineResult['status'],
      rowsRead: int(rb, 'rowsRead'),
      rowsWritten: int(rb, 'rowsWritten'),
      rowsRejected: int(rb, 'rowsRejected'),
      error: typeof rb.error === 'string' ? rb.error : null,
      steps: arr(rb, 'steps') as EngineResult['steps'],
    };
    return reply.status(200).send({ success: true, recorded: d.finish(runId, worker, result) });
  });
}
