import type { FastifySchema } from 'fastify';
import { pipelineRunSchemas } from '../routes/pipeline-runs.schemas.ts';
import { pathParams, route, USER_ID, type Json } from './common.ts';

type Operation = keyof typeof pipelineRunSchemas;

const SUMMARIES: Record<Operation, string> = {
  startRun: 'Start a pipeline run now (202; 409 while one is queued or running)',
  listRuns: "A pipeline's runs, newest first",
  getRun: 'One run with its steps',
  cancelRun: 'Cancel a run (a cancelled run loads nothing)',
  listRejects: 'Rejected rows with reasons (the first 1,000 kept)',
  listLogs: "The run's log lines (the first 1,000 kept)",
};

/**
 * The run endpoints (docs/contract/design.md, "Pipeline runs"), each by API key and by browser session
 * (`{userId}` last): the bodies of api/routes/pipeline-runs.schemas.ts, with the guards'
 * failures and the pipeline endpoints' `{success:false, message}`.
 */
function variants(op: Operation): { apiKey: FastifySchema; session: FastifySchema } {
  const s = pipelineRunSchemas[op] as { params: { properties: Record<string, Json> }; querystring?: Json; response: Record<number, Json> };
  const method = op === 'startRun' || op === 'cancelRun' ? 'POST' : 'GET';
  const ids = Object.fromEntries(Object.entries(s.params.properties).filter(([name]) => name !== 'userId'));
  const doc = (auth: 'apiKey' | 'session') =>
    route({
      method,
      operationId: auth === 'apiKey' ? op : `${op}Session`,
      summary: auth === 'apiKey' ? SUMMARIES[op] : `${SUMMARIES[op]} (browser session)`,
      tags: ['pipeline-runs'],
      auth,
      errors: 'MessageError',
      params: pathParams(auth === 'apiKey' ? ids : { ...ids, userId: USER_ID }),
      ...(s.querystring ? { querystring: s.querystring } : {}),
      response: Object.fromEntries(Object.entries(s.response).map(([code, body]) => [code, { description: Number(code) < 300 ? 'Success' : 'Refused', ...body }])),
    });
  return { apiKey: doc('apiKey'), session: doc('session') };
}

export const pipelineRunRouteSchemas = Object.fromEntries(
  (Object.keys(pipelineRunSchemas) as Operation[]).map((op) => [op, variants(op)]),
) as Record<Operation, { apiKey: FastifySchema; session: FastifySchema }>;
