import { answer, apiBody, CLIENT_ID, pathParams, route, USER_ID } from './common.ts';

const admin = { tags: ['settings'], auth: 'admin' as const, params: pathParams({ userId: USER_ID }) };

export const settingsSchemas = {
  session: route({
    method: 'GET',
    operationId: 'settingsSession',
    summary: 'Settings UI: role, whether settings are shown, the secret store state',
    tags: ['settings'],
    auth: 'session',
    params: pathParams({ userId: USER_ID }),
    response: { 200: answer('SettingsSession', 'The signed-in user') },
  }),
  coreModels: route({
    ...admin,
    method: 'GET',
    operationId: 'listCoreModels',
    summary: 'Core models to inherit from, with their columns',
    response: { 200: answer('CoreModelList', 'Every core model') },
  }),
  testConnection: route({
    ...admin,
    method: 'POST',
    operationId: 'testConnection',
    summary: 'Test Connection: really connects (PostgreSQL, Snowflake) within a time limit',
    body: apiBody('ConnectionRequest'),
    response: {
      200: answer('ConnectionTest', 'Tried: `connected` says whether it worked'),
      400: answer('ErrorBody', '`Validation failed: ...` naming every field, or a malformed body'),
      404: answer('ErrorBody', 'secretRef names no stored secret'),
      409: answer('ErrorBody', 'The secret store is not usable (BI_SECRET_KEY missing or changed)'),
    },
  }),
  connections: route({
    ...admin,
    method: 'POST',
    operationId: 'writeConnection',
    summary: 'Write a Connection manifest; the password is stored encrypted and referenced by secretRef',
    body: apiBody('ConnectionRequest'),
    response: {
      201: answer('ConnectionWritten', 'Created'),
      200: answer('ConnectionWritten', 'Updated'),
      400: answer('ErrorBody', '`Validation failed: ...` naming every field, or a malformed body'),
      409: answer('ErrorBody', 'The secret store is not usable (BI_SECRET_KEY missing or changed)'),
      422: answer('ErrorBody', 'The apply failed; a new manifest is withdrawn'),
      503: answer('ErrorBody', 'The manifest could not be recorded; nothing applied'),
    },
  }),
  audit: route({
    ...admin,
    params: pathParams({ clientId: CLIENT_ID, userId: USER_ID }),
    method: 'GET',
    operationId: 'clientAudit',
    summary: "A client's onboarding audit and its manifest's reconcile status",
    response: { 200: answer('ClientAudit', 'The audit'), 404: answer('ErrorBody', '`Client <ID> not found`: neither a registry entry nor a manifest') },
  }),
};
