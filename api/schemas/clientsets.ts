import { answer, apiBody, checkedByHandler, pathParams, route, schemaFile } from './common.ts';

const NAME = pathParams({ name: { type: 'string', description: 'the ClientSet\'s metadata.name' } });

export const clientSetSchemas = {
  list: route({
    method: 'GET',
    operationId: 'listClientSets',
    summary: 'ClientSets: inputs, tenants per state, rollout',
    tags: ['reconciler'],
    auth: 'admin',
    response: { 200: answer('ClientSetList', 'Every ClientSet the store knows') },
  }),
  read: route({
    method: 'GET',
    operationId: 'readClientSet',
    summary: 'One ClientSet: per-tenant state, wave and digest, rollout, the last rendered digests',
    tags: ['reconciler'],
    auth: 'admin',
    params: NAME,
    response: { 200: answer('ClientSetRead', 'The set'), 404: answer('ErrorBody', '`ClientSet <name> not found`') },
  }),
  preview: route({
    method: 'POST',
    operationId: 'previewClientSet',
    summary: 'What applying a ClientSet manifest would do per tenant, through the real apply path in a transaction that always rolls back',
    tags: ['reconciler'],
    auth: 'admin',
    // The route parses YAML itself (routes/clientsets.ts).
    consumes: ['application/json', 'application/yaml'],
    body: checkedByHandler({
      type: 'object',
      description: 'a ClientSet manifest (apiVersion, kind ClientSet, metadata, spec): JSON, or YAML as the file is written with `Content-Type: application/yaml`',
      properties: { apiVersion: { type: 'string' }, kind: { const: 'ClientSet' }, metadata: { type: 'object' }, spec: schemaFile('clientset') },
    }),
    response: { 200: answer('ClientSetPreview', 'Per tenant: create, update, delete, unchanged, orphaned or invalid; nothing written'), 400: answer('ErrorBody', 'Not a valid ClientSet manifest (the field path is named), or YAML that does not parse (line and column named)') },
  }),
  approve: route({
    method: 'POST',
    operationId: 'approveClientSet',
    summary: 'Release what a ClientSet holds: the next wave, a pause after a fixed failure, held deletions',
    tags: ['reconciler'],
    auth: 'admin',
    params: NAME,
    body: apiBody('ClientSetApproveRequest'),
    bodyOptional: true,
    response: {
      200: answer('ClientSetRead', 'The set after the approval was applied'),
      400: answer('ErrorBody', '`digest` is not a string'),
      404: answer('ErrorBody', '`ClientSet <name> not found`'),
      409: answer('ErrorBody', 'The set has another digest now (`ClientSet <name> is at digest <digest>`)'),
    },
  }),
};
