/**
 * JSON Schemas of the pipeline-run endpoints (docs/contract/design.md, "Pipeline runs"), ready to attach as a
 * route's `schema` and to publish in the OpenAPI document.
 */

import { RUN_STATUSES, STEP_STATUSES } from '../../controller/generated/schema-constants.ts';

/** The run's and its steps' statuses: the lists in schemas/api.schema.json. */
export const RUN_STATUS_VALUES = RUN_STATUSES;
export const STEP_STATUS_VALUES = STEP_STATUSES;
export const RUN_TRIGGER_VALUES = ['api', 'schedule', 'cli'] as const;
/** `limit` bounds of the listings. */
export const LIMITS = { runs: { default: 20, max: 1000 }, rejects: { default: 100, max: 1000 }, logs: { default: 1000, max: 1000 } } as const;

const nullableString = { type: ['string', 'null'] } as const;
const count = { type: 'integer', minimum: 0 } as const;

export const stepProgressSchema = {
  type: 'object',
  required: ['stepId', 'type', 'name', 'status', 'rowsIn', 'rowsOut', 'rowsRejected', 'durationMs', 'message'],
  properties: {
    stepId: { type: 'string' },
    type: { type: 'string' },
    name: { type: 'string' },
    status: { type: 'string', enum: STEP_STATUS_VALUES },
    rowsIn: count,
    rowsOut: count,
    rowsRejected: count,
    durationMs: count,
    message: nullableString,
    checks: { type: 'object', additionalProperties: true },
  },
} as const;

export const runSchema = {
  type: 'object',
  required: [
    'runId',
    'pipelineId',
    'status',
    'trigger',
    'attempt',
    'queuedAt',
    'startedAt',
    'finishedAt',
    'durationMs',
    'rowsRead',
    'rowsWritten',
    'rowsRejected',
    'error',
    'steps',
  ],
  properties: {
    runId: { type: 'string', pattern: '^RUN-\\d+$' },
    pipelineId: { type: 'string' },
    status: { type: 'string', enum: RUN_STATUS_VALUES },
    trigger: { type: 'string', enum: RUN_TRIGGER_VALUES },
    attempt: { type: 'integer', minimum: 1 },
    queuedAt: { type: 'string', format: 'date-time' },
    startedAt: nullableString,
    finishedAt: nullableString,
    durationMs: { type: ['integer', 'null'], minimum: 0 },
    rowsRead: count,
    rowsWritten: count,
    rowsRejected: count,
    error: nullableString,
    /** Queue mode: the `bictl worker` that ran it; absent for in-process runs. */
    worker: { type: 'string' },
    steps: { type: 'array', items: stepProgressSchema },
  },
} as const;

export const rejectSchema = {
  type: 'object',
  required: ['step', 'row', 'reasons'],
  properties: { step: { type: 'string' }, row: { type: 'object', additionalProperties: true }, reasons: { type: 'array', items: { type: 'string' } } },
} as const;

export const logLineSchema = {
  type: 'object',
  required: ['at', 'level', 'message'],
  properties: { at: { type: 'string' }, level: { type: 'string', enum: ['info', 'warn', 'error'] }, message: { type: 'string' } },
} as const;

/** Failures of the pipeline endpoints: `{success:false, message}` (docs/contract/api.md §4.4 style). */
export const failureSchema = {
  type: 'object',
  required: ['success', 'message'],
  properties: { success: { const: false }, message: { type: 'string' } },
} as const;

const ok = (key: string, schema: unknown) => ({ type: 'object', required: ['success', key], properties: { success: { const: true }, [key]: schema } });

export const runResponseSchema = ok('run', runSchema);
export const runsResponseSchema = ok('runs', { type: 'array', items: runSchema });
export const rejectsResponseSchema = ok('rejects', { type: 'array', items: rejectSchema });
export const logsResponseSchema = ok('logs', { type: 'array', items: logLineSchema });

const limitQuery = (l: { default: number; max: number }) => ({ type: 'integer', minimum: 1, maximum: l.max, default: l.default });

export const pipelineParams = { type: 'object', required: ['pipelineId'], properties: { pipelineId: { type: 'string' }, userId: { type: 'string' } } } as const;
export const runParams = { type: 'object', required: ['runId'], properties: { runId: { type: 'string' }, userId: { type: 'string' } } } as const;
export const runsQuery = { type: 'object', properties: { status: { type: 'string', enum: RUN_STATUS_VALUES }, limit: limitQuery(LIMITS.runs) } } as const;
export const rejectsQuery = {
  type: 'object',
  properties: { limit: limitQuery(LIMITS.rejects), offset: { type: 'integer', minimum: 0, maximum: 1000, default: 0, description: 'rejected rows to skip (paging)' } },
} as const;
export const logsQuery = { type: 'object', properties: { limit: limitQuery(LIMITS.logs) } } as const;

/** Route schemas, by operation (params, querystring, responses). */
export const pipelineRunSchemas = {
  startRun: { params: pipelineParams, response: { 202: runResponseSchema, 404: failureSchema, 409: failureSchema } },
  listRuns: { params: pipelineParams, querystring: runsQuery, response: { 200: runsResponseSchema, 400: failureSchema, 404: failureSchema } },
  getRun: { params: runParams, response: { 200: runResponseSchema, 404: failureSchema } },
  cancelRun: { params: runParams, response: { 202: runResponseSchema, 404: failureSchema, 409: failureSchema } },
  listRejects: { params: runParams, querystring: rejectsQuery, response: { 200: rejectsResponseSchema, 400: failureSchema, 404: failureSchema } },
  listLogs: { params: runParams, querystring: logsQuery, response: { 200: logsResponseSchema, 400: failureSchema, 404: failureSchema } },
} as const;
