import { answer, apiBody, pathParams, route, USER_ID } from './common.ts';

const admin = { tags: ['users'], auth: 'admin' as const };

/** The users API (docs/contract/design.md, "Tenancy and authorization"): admin sessions only. */
export const userSchemas = {
  list: route({
    ...admin,
    method: 'GET',
    operationId: 'listUsers',
    summary: 'Every user with role, grants and state',
    params: pathParams({ userId: USER_ID }),
    response: { 200: answer('UserList', 'The users') },
  }),
  create: route({
    ...admin,
    method: 'POST',
    operationId: 'createUser',
    summary: 'Create a user (Cache-Control: no-store)',
    params: pathParams({ userId: USER_ID }),
    body: apiBody('UserRequest'),
    response: {
      201: answer('UserWritten', 'Created'),
      400: answer('ErrorBody', 'A field is missing or invalid (each named), or a malformed body'),
      409: answer('ErrorBody', 'The username is taken'),
    },
  }),
  update: route({
    ...admin,
    method: 'PATCH',
    operationId: 'updateUser',
    summary: "Change a user's role, grants or disabled state",
    params: pathParams({ targetUserId: USER_ID, userId: USER_ID }),
    body: apiBody('UserUpdate'),
    response: {
      200: answer('UserWritten', 'Changed'),
      400: answer('ErrorBody', 'A field is invalid (each named), or a malformed body'),
      404: answer('ErrorBody', '`User <ID> not found`'),
      409: answer('ErrorBody', 'The last admin cannot be demoted or disabled; an admin cannot disable or demote themself; or the `version` (`If-Match`) sent is not the current one (another admin changed the user)'),
    },
  }),
  resetPassword: route({
    ...admin,
    method: 'POST',
    operationId: 'resetUserPassword',
    summary: "Set a user's password (Cache-Control: no-store); every session of the user ends",
    params: pathParams({ targetUserId: USER_ID, userId: USER_ID }),
    body: apiBody('PasswordReset'),
    response: {
      200: answer('UserWritten', 'Set; the user signs in again with the new password'),
      400: answer('ErrorBody', 'No password, or one shorter than 8 characters (named), or a malformed body'),
      404: answer('ErrorBody', '`User <ID> not found`'),
      409: answer('ErrorBody', 'The `version` (`If-Match`) sent is not the current one'),
    },
  }),
  remove: route({
    ...admin,
    method: 'DELETE',
    operationId: 'deleteUser',
    summary: 'Delete a user: their keys are revoked, their sessions and grants end (audited)',
    params: pathParams({ targetUserId: USER_ID, userId: USER_ID }),
    response: {
      200: answer('UserDeleted', 'Deleted'),
      404: answer('ErrorBody', '`User <ID> not found`'),
      409: answer('ErrorBody', 'You cannot delete your own account; or the last admin'),
    },
  }),
};
