import type { FastifySchema } from 'fastify';
import { RUN_STATUSES } from '../../controller/generated/schema-constants.ts';
import { MAX_REJECTS_KEPT } from '../../controller/runs/store.ts';
import { answer, pathParams, route, USER_ID, type Json } from './common.ts';

/** `limit` bounds of the listings. */
export const LIMITS = { runs: { default: 20, max: 1000 }, rejects: { default: 100, max: 1000 }, logs: { default: 1000, max: 1000 } } as const;

const limit = (l: { default: number; max: number }): Json => ({ type: 'integer', minimum: 1, maximum: l.max, default: l.default });
const query = (properties: Record<string, Json>): Json => ({ type: 'object', properties });

/** The filters of a run's rejected rows and log lines: the reads and the downloads (routes/run-exports.ts) take the same. */
export const RUN_ROW_FILTERS = {
  step: { type: 'string', maxLength: 200, description: 'only the rows or lines of this step (its name)' },
  reason: { type: 'string', maxLength: 200, description: 'only the rejected rows with a reason containing this text (case-insensitive)' },
  level: { enum: ['info', 'warn', 'error'], description: 'only the log lines of this level' },
} satisfies Record<string, Json>;
const PIPELINE = { pipelineId: { type: 'string' } };
const RUN = { runId: { type: 'string' } };

/** Each operation: its path ids, query, and answers (bodies of schemas/api.schema.json: PipelineRun and its lists). */
const OPERATIONS = {
  startRun: {
    summary: 'Start a pipeline run now (202; 409 while one is queued or running)',
    ids: PIPELINE,
    response: { 202: answer('PipelineRunAnswer', 'Queued'), 404: answer('MessageError', '`Pipeline <ID> not found`'), 409: answer('MessageError', 'A run of the pipeline is queued or running') },
  },
  listRuns: {
    summary: "A pipeline's runs, newest first",
    ids: PIPELINE,
    querystring: query({ status: { enum: [...RUN_STATUSES] }, limit: limit(LIMITS.runs) }),
    response: { 200: answer('PipelineRunList', 'The runs'), 404: answer('MessageError', '`Pipeline <ID> not found`') },
  },
  getRun: {
    summary: 'One run with its steps',
    ids: RUN,
    response: { 200: answer('PipelineRunAnswer', 'The run'), 404: answer('MessageError', '`Run <ID> not found`') },
  },
  cancelRun: {
    summary: 'Cancel a run (a cancelled run loads nothing)',
    ids: RUN,
    response: { 202: answer('PipelineRunAnswer', 'Cancelled, or being cancelled'), 404: answer('MessageError', '`Run <ID> not found`'), 409: answer('MessageError', 'The run has finished') },
  },
  listRejects: {
    summary: 'Rejected rows with reasons (the first 1,000 kept)',
    ids: RUN,
    querystring: query({ limit: limit(LIMITS.rejects), offset: { type: 'integer', minimum: 0, maximum: MAX_REJECTS_KEPT, default: 0, description: 'rejected rows to skip (paging)' }, step: RUN_ROW_FILTERS.step, reason: RUN_ROW_FILTERS.reason }),
    response: { 200: answer('RunRejectList', 'One page of rejected rows'), 404: answer('MessageError', '`Run <ID> not found`') },
  },
  listLogs: {
    summary: "The run's log lines (the first 1,000 kept)",
    ids: RUN,
    querystring: query({ limit: limit(LIMITS.logs), level: RUN_ROW_FILTERS.level, step: RUN_ROW_FILTERS.step }),
    response: { 200: answer('RunLogList', 'The log lines'), 404: answer('MessageError', '`Run <ID> not found`') },
  },
} satisfies Record<string, { summary: string; ids: Record<string, Json>; querystring?: Json; response: Record<number, Json> }>;

type Operation = keyof typeof OPERATIONS;

/**
 * The run endpoints (docs/contract/design.md, "Pipeline runs"), each by API key and by browser session
 * (`{userId}` last), answering failures as `{success:false, message}`.
 */
function variants(op: Operation): { apiKey: FastifySchema; session: FastifySchema } {
  const o: { summary: string; ids: Record<string, Json>; querystring?: Json; response: Record<number, Json> } = OPERATIONS[op];
  const method = op === 'startRun' || op === 'cancelRun' ? 'POST' : 'GET';
  const doc = (auth: 'apiKey' | 'session') =>
    route({
      method,
      operationId: auth === 'apiKey' ? op : `${op}Session`,
      summary: auth === 'apiKey' ? o.summary : `${o.summary} (browser session)`,
      tags: ['pipeline-runs'],
      auth,
      errors: 'MessageError',
      params: pathParams(auth === 'apiKey' ? o.ids : { ...o.ids, userId: USER_ID }),
      ...(o.querystring ? { querystring: o.querystring } : {}),
      response: o.response,
    });
  return { apiKey: doc('apiKey'), session: doc('session') };
}

export const pipelineRunRouteSchemas = Object.fromEntries((Object.keys(OPERATIONS) as Operation[]).map((op) => [op, variants(op)])) as Record<Operation, { apiKey: FastifySchema; session: FastifySchema }>;
