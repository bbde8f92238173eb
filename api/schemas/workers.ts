import { answer, checkedByHandler, pathParams, route, type Json } from './common.ts';

const RUN_ID: Json = { type: 'string', pattern: '^RUN-\\d+$' };
const BEARER = 'Authenticated with `Authorization: Bearer <BI_WORKER_TOKEN>` (a wrong or missing token: 401). Queue mode only (BI_QUEUE_URL).';
const report = (operationId: string, summary: string, params: boolean): ReturnType<typeof route> =>
  route({
    method: 'POST',
    operationId,
    summary,
    description: BEARER,
    tags: ['workers'],
    auth: 'worker',
    ...(params ? { params: pathParams({ runId: RUN_ID }) } : {}),
    // Checked by the handler, after its 409 outside queue mode.
    body: checkedByHandler({ type: 'object' }),
    response: {
      200: answer('WorkerReportAnswer', 'Recorded'),
      401: answer('ErrorBody', 'BI_WORKER_TOKEN missing, wrong, or not set on the controller'),
      404: answer('ErrorBody', 'Unknown run'),
      409: answer('ErrorBody', 'The controller is not in queue mode'),
    },
  });

export const workerSchemas = {
  list: route({
    method: 'GET',
    operationId: 'listWorkers',
    summary: 'The bictl workers of queue mode: heartbeat, state, running runs, version',
    tags: ['workers'],
    auth: 'admin',
    response: { 200: answer('WorkerList', 'Workers up, and those lost within the last hour') },
  }),
  heartbeat: report('workerHeartbeat', 'A worker is up: `{name, version, concurrency, running:[runId]}`', false),
  claim: report('workerClaimRun', 'A worker took the run’s job: `{worker}`; `claimed:false` when the run is no longer queued (do not run it)', true),
  progress: report('workerRunProgress', 'Progress of a run on a worker: `{worker, steps?, rejects?, logs?}`; `cancelRequested:true` means stop it', true),
  finish: report('workerRunFinished', 'The outcome of a run on a worker: `{worker, result:{status, rowsRead, rowsWritten, rowsRejected, error, steps}}`', true),
};
