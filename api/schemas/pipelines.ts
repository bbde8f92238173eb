import { answer, oneOf, pathParams, route, schemaFile, USER_ID, writeVariant } from './common.ts';

const importPipeline = (auth: 'apiKey' | 'session') =>
  route({
    ...writeVariant(auth, 'importPipeline', { apiKey: 'Import a pipeline (docs/contract/api.md §4.4)', session: 'Import a pipeline, browser session' }),
    description: 'Writes `pipelines/<name>.yaml` and reconciles it at once. Failures answer `{success: false, message}` (docs/contract/api.md §4.4).',
    tags: ['pipelines'],
    errors: 'MessageError',
    body: schemaFile('pipeline'),
    response: {
      201: answer('PipelineImported', 'Imported: status draft, every step configured'),
      200: answer('PipelinePlanned', 'The plan of a dry run; nothing written'),
      400: answer('MessageError', 'The payload is invalid, e.g. `Pipeline JSON must include a name.` (docs/contract/api.md §7), or a malformed body'),
      403:
        auth === 'apiKey'
          ? answer('MessageError', "The API key is scoped to a client: the pipeline's connections must be that client's")
          : oneOf(['ErrorBody', 'MessageError'], "The session guard's `{error}` (CSRF, another user's path), or the tenant check's `{message}`"),
      422: answer('MessageError', 'The apply failed; nothing kept'),
      503: answer('MessageError', 'The manifest could not be recorded; nothing applied'),
    },
  });

export const pipelineSchemas = {
  importWithKey: importPipeline('apiKey'),
  importWithSession: importPipeline('session'),
  read: route({
    method: 'GET',
    operationId: 'readPipeline',
    summary: 'A stored pipeline with its resolved steps',
    tags: ['pipelines'],
    auth: 'apiKey',
    errors: 'MessageError',
    params: pathParams({ pipelineId: { type: 'string', description: 'pipeline ID (DP-<digits>)' } }),
    response: { 200: answer('PipelineRead', 'The pipeline'), 404: answer('MessageError', '`Pipeline <ID> not found`') },
  }),
  readWithSession: route({
    method: 'GET',
    operationId: 'readPipelineSession',
    summary: 'A stored pipeline with its resolved steps (browser session)',
    description: 'A member reads only the pipelines of their granted clients; others answer like an unknown ID.',
    tags: ['pipelines'],
    auth: 'session',
    errors: 'MessageError',
    params: pathParams({ pipelineId: { type: 'string', description: 'pipeline ID (DP-<digits>)' }, userId: USER_ID }),
    response: { 200: answer('PipelineRead', 'The pipeline'), 404: answer('MessageError', '`Pipeline <ID> not found`') },
  }),
  list: route({
    method: 'GET',
    operationId: 'listPipelines',
    summary: 'Every pipeline the caller may see, with owner, schedule, next and last run',
    description: 'Admins see every pipeline; a member the pipelines of their granted clients.',
    tags: ['pipelines'],
    auth: 'session',
    params: pathParams({ userId: USER_ID }),
    response: { 200: answer('PipelineList', 'The pipelines, by name') },
  }),
};
