import { answer, apiBody, checkedByHandler, CLIENT_ID, pathParams, route, USER_ID } from './common.ts';

const admin = { tags: ['clients'], auth: 'admin' as const, method: 'POST' as const };
const params = pathParams({ clientId: CLIENT_ID, userId: USER_ID });

const shortcut = (operationId: string, summary: string, description: string, conflict: string) =>
  route({
    ...admin,
    operationId,
    summary,
    description,
    params,
    bodyOptional: true,
    // Not read: whatever is sent is ignored.
    body: checkedByHandler({ type: 'object', description: 'no fields (may be left out; ignored)' }),
    response: {
      200: answer('ClientLifecycleResult', "The client's registry status after the change"),
      404: answer('ErrorBody', '`Client <ID> not found`'),
      409: answer('ErrorBody', conflict),
      422: answer('ErrorBody', 'The rewritten manifest did not apply'),
      503: answer('ErrorBody', 'The manifest could not be written (folder not writable, git push refused)'),
    },
  });

/** The lifecycle shortcuts (docs/contract/design.md, "Tenant lifecycle"): each writes the client's manifest through the one write path. */
export const lifecycleSchemas = {
  suspend: shortcut(
    'suspendClient',
    'Suspend a client: `spec.suspended: true` written to its manifest',
    "Its keys and members are refused (403 `Client <ID> is suspended`), its schedules do not fire, its runs are refused (409) and queued ones cancelled; configuration and data stay. Idempotent.",
    'The client is not ACTIVE or SUSPENDED, or has no manifest to change',
  ),
  resume: shortcut(
    'resumeClient',
    "Resume a suspended client: `spec.suspended` removed from its manifest",
    'Immediate: keys, members, schedules and runs work again. Idempotent.',
    'The client is not ACTIVE or SUSPENDED, or has no manifest to change',
  ),
  restore: shortcut(
    'restoreClient',
    "Restore an offboarded client: its manifest written back from what was retained",
    'The client is ACTIVE again with the same IDs (connection, model, VDMs, dashboards).',
    'The client is not OFFBOARDED, or its purge has started',
  ),
  purge: route({
    ...admin,
    operationId: 'purgeClient',
    summary: 'Purge an offboarded client: remove its model, VDMs, dashboards, pipelines and runs, keys, and its own connection and secret',
    description:
      'After `retainUntil` (before it only with `force: true`, admins). The registry record stays as DELETED (isDeleted true). With BI_PURGE_DRY_RUN=true it answers `{dryRun: true, removes}` and removes nothing. A purge interrupted by a crash is finished at the next start.',
    params,
    // Checked by PurgeClient: `confirm` repeats the path's client ID, before `force` is looked at.
    body: checkedByHandler(apiBody('PurgeRequest')),
    response: {
      200: answer('PurgeResult', 'Purged (status DELETED), or the dry run'),
      400: answer('ErrorBody', '`confirm` does not repeat the client ID, or `force` is not a boolean'),
      404: answer('ErrorBody', '`Client <ID> not found`'),
      409: answer('ErrorBody', 'The client is not OFFBOARDED, or it is retained until `retainUntil`'),
    },
  }),
};
