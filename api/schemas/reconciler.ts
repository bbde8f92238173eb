import { PHASES } from '../../controller/generated/schema-constants.ts';
import { answer, apiBody, checkedByHandler, route } from './common.ts';

/**
 * `GET /v1/reconciler/status` for the kinds the reconciler applies (its appliers', in apply
 * order): an empty or repeated `kind` or `phase` is refused like an unknown one.
 */
export const reconcileStatusSchema = (kinds: readonly string[]) =>
  route({
    method: 'GET',
    operationId: 'reconcileStatus',
    summary: 'Per-manifest reconcile status',
    tags: ['reconciler'],
    auth: 'session',
    querystring: {
      type: 'object',
      properties: {
        kind: { enum: [...kinds], description: `only this kind (${kinds.join(', ')})`, 'x-empty': 'invalid' },
        phase: { enum: [...PHASES], description: `only this phase (${PHASES.join(', ')})`, 'x-empty': 'invalid' },
      },
      'x-bare-paths': true,
    },
    response: { 200: answer('ReconcileStatus', 'The status of every manifest'), 400: answer('ErrorBody', 'An unknown kind or phase') },
  });

export const reconcilerSchemas = {
  events: route({
    method: 'GET',
    operationId: 'reconcileEvents',
    summary: 'Server-sent reconcile events (phase changes, apply steps)',
    description:
      'Each event is a line `data: <JSON>` with `type` (phase, step or prune-blocked), `key`, `kind`, `name`, `phase`, `step`, `message` and `at`; comment lines keep the stream open. An EventSource cannot send headers: the CSRF token may come as `?ctn=`.',
    tags: ['reconciler'],
    auth: 'session',
    csrfFromQuery: true,
    querystring: { type: 'object', properties: { ctn: { type: 'string', description: 'the CSRF token, when header CTN cannot be sent' } } },
    response: {
      200: { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string', description: 'server-sent events' } } } },
    },
  }),
  sync: route({
    method: 'POST',
    operationId: 'syncNow',
    summary: 'Sync now: a full sync of the folder (git mode: fetch first)',
    tags: ['reconciler'],
    auth: 'admin',
    body: apiBody('SyncRequest'),
    bodyOptional: true,
    response: {
      200: answer('SyncReport', 'What the sync did'),
      400: answer('ErrorBody', 'allowMassPrune is not a boolean, or a malformed body'),
      503: answer('ErrorBody', 'git mode: the remote could not be fetched'),
    },
  }),
  retry: route({
    method: 'POST',
    operationId: 'retryManifest',
    summary: 'Retry now: reconcile one manifest again as its file is, without waiting for the backoff',
    tags: ['reconciler'],
    auth: 'admin',
    body: apiBody('RetryRequest'),
    response: {
      200: answer('RetryResult', 'The result of the reconcile'),
      400: answer('ErrorBody', '`key` is missing or not a string'),
      404: answer('ErrorBody', '`Manifest <key> not found`: no status row, or its file is gone'),
    },
  }),
  webhook: route({
    method: 'POST',
    operationId: 'gitWebhook',
    summary: 'Git push hook: fetch and sync at once (HMAC SHA-256 of the body in X-Hub-Signature-256)',
    tags: ['reconciler'],
    auth: 'public',
    rawBody: true,
    body: checkedByHandler({ type: 'object', description: 'the push event as the git host sends it (any media type); only its signature is checked', additionalProperties: true }),
    response: {
      202: answer('WebhookAccepted', 'Accepted; the sync runs in the background'),
      401: answer('ErrorBody', '`Invalid signature`'),
      404: answer('ErrorBody', 'Git mode or the webhook secret is not configured'),
    },
  }),
};
