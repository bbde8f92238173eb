import { answer, apiBody, pathParams, route, USER_ID } from './common.ts';

// No pattern: a malformed key ID is a key that does not exist (404, as docs/contract/api.md §4.8 has always answered).
const KEY_ID = { type: 'string', description: 'API key ID (SK####A#####)' };

export const authSchemas = {
  login: route({
    method: 'POST',
    operationId: 'login',
    summary: 'Log in: session cookies (LASID, ATN, RTN) and a CSRF token for the CTN header',
    tags: ['auth'],
    auth: 'public',
    body: apiBody('LoginRequest'),
    response: {
      200: answer('SessionTokens', 'Logged in; the cookies are set'),
      400: answer('ErrorBody', 'Missing username or password, or a malformed body'),
      401: answer('ErrorBody', 'Invalid username or password'),
      429: { ...answer('ErrorBody', 'Too many failed logins from this address or for this user'), headers: { 'retry-after': { type: 'integer', minimum: 1 } } },
      503: { ...answer('ErrorBody', 'Too many logins in progress; retry in 1 s'), headers: { 'retry-after': { type: 'integer', minimum: 1 } } },
    },
  }),
  refresh: route({
    method: 'POST',
    operationId: 'refreshSession',
    summary: 'Rotate the access and refresh tokens (cookie RTN) and the CSRF token',
    tags: ['auth'],
    auth: 'public',
    response: {
      200: answer('SessionTokens', 'Rotated; the cookies are set'),
      401: answer('ErrorBody', 'Session required: no, an expired or a reused refresh token (a reuse revokes the session)'),
    },
  }),
  logout: route({
    method: 'POST',
    operationId: 'logout',
    summary: 'Log out: the session is revoked in the store and the cookies cleared',
    tags: ['auth'],
    auth: 'public',
    response: { 200: answer('LoggedOut', 'Logged out (also when there was no session)') },
  }),
  session: route({
    method: 'GET',
    operationId: 'currentSession',
    summary: 'Who the session belongs to',
    tags: ['auth'],
    auth: 'session',
    response: { 200: answer('SessionUser', 'The signed-in user') },
  }),
};

export const apiKeySchemas = {
  create: route({
    method: 'POST',
    operationId: 'createApiKey',
    summary: 'Create an API key (docs/contract/api.md §4.7); the key is shown this once only',
    tags: ['api-keys'],
    auth: 'session',
    params: pathParams({ userId: USER_ID }),
    body: apiBody('ApiKeyRequest'),
    response: {
      201: answer('ApiKeyCreated', 'Created'),
      400: answer('ErrorBody', 'A field is missing or invalid (each named), or a malformed body'),
      403: answer('ErrorBody', "Invalid CSRF token, another user's path, or Admin role required for a targetUserId other than the caller"),
      404: answer('ErrorBody', 'targetUserId names no user'),
    },
  }),
  list: route({
    method: 'GET',
    operationId: 'listApiKeys',
    summary: "The caller's API keys, without secrets",
    tags: ['api-keys'],
    auth: 'session',
    params: pathParams({ userId: USER_ID }),
    response: { 200: answer('ApiKeyList', "The caller's keys") },
  }),
  listAll: route({
    method: 'GET',
    operationId: 'listAllApiKeys',
    summary: "Every user's API keys with their user, without secrets (admins; revoke with DELETE /v1/api-keys/{userId}/{keyId})",
    tags: ['api-keys'],
    auth: 'admin',
    params: pathParams({ userId: USER_ID }),
    response: { 200: answer('OwnedApiKeyList', "Every user's keys") },
  }),
  revoke: route({
    method: 'DELETE',
    operationId: 'revokeApiKey',
    summary: 'Revoke an API key (docs/contract/api.md §4.8): it stops working at once',
    tags: ['api-keys'],
    auth: 'session',
    params: pathParams({ userId: USER_ID, keyId: KEY_ID }),
    response: { 200: answer('ApiKeyRevoked', 'Revoked'), 404: answer('ErrorBody', "No such key among the caller's (an admin's: among all)") },
  }),
};
