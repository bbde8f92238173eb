import { CLIENT_STATUSES } from '../../controller/generated/schema-constants.ts';
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, MAX_SEARCH_LENGTH, SORT_FIELDS } from '../../controller/kinds/client/listing.ts';
import { answer, apiBody, checkedByHandler, CLIENT_ID, manifestBody, oneOf, pathParams, route, schemaFile, USER_ID, writeVariant } from './common.ts';

const POSITIVE = 'must be a positive integer';

const onboard = (auth: 'apiKey' | 'admin') =>
  route({
    ...writeVariant(auth, 'onboardClient', { apiKey: 'Onboard a client (docs/contract/api.md §4.1)', session: 'Onboard a client, admin session (docs/contract/api.md §4.1)' }),
    description:
      'Writes `clients/<CLIENTID>.yaml` and reconciles it at once: all or nothing. An ACTIVE client answers 200 ALREADY_EXISTS and nothing is created.',
    tags: ['clients'],
    body: manifestBody('client'),
    response: {
      201: answer('OnboardResult', 'COMPLETED: the client is ACTIVE'),
      200: oneOf(['OnboardResult', 'OnboardPlanned'], 'ALREADY_EXISTS (nothing created), or the plan of a dry run'),
      400: answer('ErrorBody', "`Validation failed: <problems separated by '; '>` (docs/contract/api.md §7), or a malformed body"),
      403: answer('ErrorBody', 'The API key is scoped to another client (or, with a session: CSRF, another user, Admin role required)'),
      409: answer('ErrorBody', 'The connection belongs to another client; nothing written'),
      422: oneOf(['OnboardFailed', 'OnboardPlanFailed'], 'A step failed: everything created is removed, a FAILED entry kept for audit'),
      503: oneOf(['ErrorBody', 'OnboardFailed'], 'The manifest could not be recorded or applied for want of the store (folder not writable, git push refused, store busy); nothing kept'),
    },
  });

const admin = { tags: ['clients'], auth: 'admin' as const };
/** The registry's reads: admins see every client, a member the clients granted to them. */
const session = { tags: ['clients'], auth: 'session' as const };

export const clientSchemas = {
  onboardWithKey: onboard('apiKey'),
  onboardWithSession: onboard('admin'),
  list: route({
    ...session,
    method: 'GET',
    operationId: 'listClients',
    summary: 'List clients (docs/contract/api.md §4.5)',
    params: pathParams({ userId: USER_ID }),
    // docs/contract/api.md §4.5: a name given twice, an empty page or limit, are refused; problems name the parameter
    // alone, as before (`x-bare-paths`); the pattern is compiled by the handler (listing.ts).
    querystring: {
      type: 'object',
      properties: {
        page: { type: 'integer', minimum: 1, maximum: 999_999_999, default: 1, description: '1-indexed', 'x-empty': 'invalid', 'x-messages': { type: POSITIVE, minimum: POSITIVE, maximum: POSITIVE } },
        limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'results per page', 'x-empty': 'invalid' },
        status: { type: 'string', enum: [...CLIENT_STATUSES], description: 'case-insensitive', 'x-uppercase': true },
        search: {
          type: 'string',
          maxLength: MAX_SEARCH_LENGTH,
          description: 'case-insensitive regular expression (RE2) on clientId or clientName',
          'x-messages': { maxLength: `must be at most ${MAX_SEARCH_LENGTH} characters` },
        },
        order: { type: 'string', enum: ['asc', 'desc'], description: 'direction of sort (default asc, desc for onboardedDate)', 'x-messages': { enum: 'must be asc or desc' } },
        sort: { type: 'string', enum: Object.keys(SORT_FIELDS), description: 'order of the listing (default: onboardedDate, newest first); ties by clientId' },
      },
      'x-messages': { repeated: 'must be given once' },
      'x-bare-paths': true,
    },
    response: { 200: answer('ClientList', 'One page of the registry'), 400: answer('ErrorBody', 'A query parameter is invalid (each named)') },
  }),
  read: route({
    ...session,
    method: 'GET',
    operationId: 'readClient',
    summary: 'One client (docs/contract/api.md §4.6)',
    params: pathParams({ clientId: CLIENT_ID, userId: USER_ID }),
    response: { 200: answer('ClientRead', 'The client'), 404: answer('ErrorBody', '`Client <ID> not found`') },
  }),
  export: route({
    ...session,
    method: 'GET',
    operationId: 'exportClient',
    summary: 'The onboarding package that recreates an ACTIVE client (what the settings UI downloads)',
    params: pathParams({ clientId: CLIENT_ID, userId: USER_ID }),
    response: {
      200: { description: 'The onboarding package', ...schemaFile('client') },
      404: answer('ErrorBody', '`Client <ID> not found`'),
      409: answer('ErrorBody', 'The client is not ACTIVE: only an ACTIVE client can be exported'),
    },
  }),
  resources: route({
    ...admin,
    auth: 'session',
    method: 'GET',
    operationId: 'clientResources',
    summary: "A client's resources by name, its manifests' reconcile status and what offboarding would prune (the console's client page)",
    description: 'Admins see every client; a member only the clients granted to them (others answer 404).',
    params: pathParams({ clientId: CLIENT_ID, userId: USER_ID }),
    response: { 200: answer('ClientResources', 'The client and its resources'), 404: answer('ErrorBody', '`Client <ID> not found` (also outside the caller\'s clients)') },
  }),
  offboard: route({
    ...admin,
    method: 'POST',
    operationId: 'offboardClient',
    summary: "Offboard a client: withdraw its manifest (removed, or a commit removing it in git mode) and prune what it created",
    description: 'The removal is reconciled at once: its dashboards, model and VDMs and the connection its onboarding created (when nothing else uses it) are removed; the registry entry stays as DELETED. Pipelines have their own manifests and stay.',
    params: pathParams({ clientId: CLIENT_ID, userId: USER_ID }),
    // Checked by OffboardClient: `confirm` repeats the path's client ID (a body that is not an object has none).
    body: checkedByHandler(apiBody('OffboardRequest')),
    response: {
      200: answer('ClientOffboarded', 'Withdrawn and pruned'),
      400: answer('ErrorBody', '`confirm` does not repeat the client ID'),
      404: answer('ErrorBody', '`Client <ID> not found`'),
      409: answer('ErrorBody', 'The client has no manifest to withdraw (already offboarded, or a failed API onboarding), or a ClientSet generates it (`Client <ID> is generated by ClientSet/<name> (input <id>): change it in the ClientSet`)'),
      503: answer('ErrorBody', 'The manifest could not be removed (folder not writable, git push refused)'),
    },
  }),
};
