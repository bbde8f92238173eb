import { answer, apiBody, pathParams, route, type Json } from './common.ts';

const OBJECT: Json = pathParams({
  kind: { type: 'string', description: 'Client, Dashboard, Pipeline, Connection, CoreModel, Notifier or ClientSet' },
  name: { type: 'string', description: 'metadata.name' },
});

export const objectSchemas = {
  read: route({
    method: 'GET',
    operationId: 'readObject',
    summary: 'An object’s desired manifest, the version the reconciler applied, and the field-level difference',
    description: 'Credential-like fields are shown as `<redacted>` (manifests hold references only: passwordEnv, secretRef).',
    tags: ['reconciler'],
    auth: 'admin',
    params: OBJECT,
    response: { 200: answer('ObjectView', 'The object'), 400: answer('ErrorBody', 'An unknown kind'), 404: answer('ErrorBody', 'No such object: `<Kind>/<name> not found`') },
  }),
  history: route({
    method: 'GET',
    operationId: 'objectHistory',
    summary: 'An object’s history: git revisions of its file, applied versions, audit entries; whether it can be rolled back',
    tags: ['reconciler'],
    auth: 'admin',
    params: OBJECT,
    response: { 200: answer('ObjectHistory', 'The history'), 400: answer('ErrorBody', 'An unknown kind'), 404: answer('ErrorBody', 'No such object') },
  }),
  rollback: route({
    method: 'POST',
    operationId: 'rollbackObject',
    summary: 'Write an earlier version of an object back through the one write path (a commit by the caller in git mode)',
    description: '`{revision}` (git mode: the file as it was at that commit) or `{version}` (an applied version the store keeps). Audited as `rollback`.',
    tags: ['reconciler'],
    auth: 'admin',
    params: OBJECT,
    body: apiBody('RollbackRequest'),
    response: {
      200: answer('RollbackAnswer', 'Written and reconciled (`phase` Synced)'),
      404: answer('ErrorBody', 'No such object, revision or version'),
      409: answer('ErrorBody', 'A generated object, a JSON file, or a version that does not apply (`phase` and the reason in `error`)'),
    },
  }),
  revert: route({
    method: 'POST',
    operationId: 'revertCommit',
    summary: 'bictl rollback over the API: revert a commit of the manifests repository with a new commit by the caller, push and apply it (git mode)',
    description: 'History is never rewritten. `revert` is null when the revision changes nothing on the branch any more. Audited as `rollback`.',
    tags: ['reconciler'],
    auth: 'admin',
    body: apiBody('RevertRequest'),
    response: {
      200: answer('RevertAnswer', 'Reverted (or nothing to revert) and applied'),
      404: answer('ErrorBody', 'No such revision'),
      409: answer('ErrorBody', 'Directory mode: reverting a commit needs git mode'),
    },
  }),
};
