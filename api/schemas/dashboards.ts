import { answer, CLIENT_ID, manifestBody, pathParams, route, USER_ID, writeVariant } from './common.ts';

const importDashboard = (auth: 'apiKey' | 'session') =>
  route({
    ...writeVariant(auth, 'importDashboard', { apiKey: 'Import a dashboard (docs/contract/api.md §4.2)', session: 'Import a dashboard, browser session (docs/contract/api.md §4.3)' }),
    description: 'Writes `dashboards/<name>.yaml` and reconciles it at once; withdrawn again when it fails.',
    tags: ['dashboards'],
    body: manifestBody('dashboard'),
    response: {
      201: answer('DashboardImported', 'Imported'),
      200: answer('DashboardImportPlanned', 'The plan of a dry run; nothing written'),
      400: answer('ErrorBody', 'The payload is invalid: every problem named (docs/contract/api.md §7), or a malformed body'),
      403: answer('ErrorBody', "The API key is scoped to a client: dataSource.dbId must be that client's connection"),
      422: answer('ErrorBody', 'A step of the apply failed (e.g. an unknown connection or VDM field); nothing kept'),
      503: answer('ErrorBody', 'The manifest could not be recorded; nothing applied'),
    },
  });

export const dashboardSchemas = {
  importWithKey: importDashboard('apiKey'),
  importWithSession: importDashboard('session'),
  read: route({
    method: 'GET',
    operationId: 'readDashboard',
    summary: 'A stored dashboard, every default applied: it imports again as is',
    tags: ['dashboards'],
    auth: 'apiKey',
    params: pathParams({ facadeId: { type: 'string', description: 'facade ID (F####A#####)' } }),
    response: {
      200: answer('DashboardRead', 'The dashboard'),
      404: answer('ErrorBody', '`Dashboard <ID> not found` (also outside the key\'s client scope)'),
    },
  }),
  readWithSession: route({
    method: 'GET',
    operationId: 'readDashboardSession',
    summary: 'A stored dashboard, browser session (the console\'s dashboard page)',
    tags: ['dashboards'],
    auth: 'session',
    params: pathParams({ facadeId: { type: 'string', description: 'facade ID (F####A#####)' }, userId: USER_ID }),
    response: {
      200: answer('DashboardRead', 'The dashboard'),
      404: answer('ErrorBody', '`Dashboard <ID> not found` (also outside the caller\'s clients)'),
    },
  }),
  list: route({
    method: 'GET',
    operationId: 'listDashboards',
    summary: 'The dashboards the caller may see, with their sections and charts (the console\'s dashboards page)',
    description: 'Admins see every dashboard; a member those of the clients granted to them.',
    tags: ['dashboards'],
    auth: 'session',
    params: pathParams({ userId: USER_ID }),
    querystring: { type: 'object', properties: { clientId: { ...CLIENT_ID, description: 'only the dashboards this client owns' } } },
    response: { 200: answer('DashboardList', 'The dashboards, by name') },
  }),
  chartTypes: route({
    method: 'GET',
    operationId: 'chartTypes',
    summary: 'Chart types and aggregations (docs/contract/api.md §4.9), without authentication',
    tags: ['dashboards'],
    auth: 'public',
    response: { 200: answer('ChartTypes', 'The catalogue') },
  }),
};
