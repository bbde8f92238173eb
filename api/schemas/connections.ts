import { answer, pathParams, route, USER_ID } from './common.ts';

const admin = { tags: ['connections'], auth: 'admin' as const };

/** The connections list of the settings UI and the test of a stored connection (admin sessions). */
export const connectionSchemas = {
  list: route({
    ...admin,
    method: 'GET',
    operationId: 'listConnections',
    summary: 'Every stored connection: where it points, owner, last test, what uses it (never a credential)',
    params: pathParams({ userId: USER_ID }),
    response: { 200: answer('ConnectionList', 'The connections, by name') },
  }),
  test: route({
    ...admin,
    method: 'POST',
    operationId: 'testStoredConnection',
    summary: 'Test a stored connection with its own credential and record the result as its last test',
    description: 'The password comes from the connection (passwordEnv or its secret), never from the request. A failed test is a 200 with `lastTest.ok: false`.',
    params: pathParams({ connectionId: { type: 'string', description: 'connection ID (D####A#####)' }, userId: USER_ID }),
    bodyOptional: true,
    response: { 200: answer('ConnectionTested', 'Tested (see lastTest.ok)'), 404: answer('ErrorBody', '`Connection <ID> not found`') },
  }),
};
