import type { FastifyInstance } from 'fastify';
import { checkClientIds, type Role, type UserView } from '../../controller/auth/users.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../controller/errors.ts';
import type { Problem } from '../../controller/types.ts';
import { principalOf } from '../auth/principal.ts';
import { userSchemas } from '../schemas/users.ts';

const ROLES: readonly Role[] = ['admin', 'member'];
export const SELF_DISABLE = 'You cannot disable your own account; another admin can';
export const SELF_DEMOTE = 'You cannot remove your own admin role; another admin can';
export const SELF_DELETE = 'You cannot delete your own account; another admin can';
/** A write naming a version the user no longer has (another admin changed it since it was read). */
export const staleUser = (userId: string, current: number, sent: number): string =>
  `User ${userId} was changed by someone else since you read it (version ${current}, yours ${sent}): reload and try again`;

type Rec = Record<string, unknown>;

function objectBody(body: unknown): Rec {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ValidationError([{ path: '', message: 'Request body must be a JSON object' }]);
  return body as Rec;
}

/** `clients`: an array of client IDs (uppercased), or a problem. */
function readClients(value: unknown, problems: Problem[]): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || value.some((c) => typeof c !== 'string')) {
    problems.push({ path: 'clients', message: 'clients must be an array of client IDs' });
    return undefined;
  }
  const ids = [...new Set((value as string[]).map((c) => c.trim().toUpperCase()))];
  problems.push(...checkClientIds(ids));
  return ids;
}

function readRole(value: unknown, problems: Problem[], required: boolean): Role | undefined {
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !(ROLES as readonly string[]).includes(value)) {
    problems.push({ path: 'role', message: `role must be one of ${ROLES.join(', ')}` });
    return undefined;
  }
  return value as Role;
}

const view = (u: UserView) => ({ userId: u.userId, username: u.username, role: u.role, clients: u.clients, disabled: u.disabled, createdAt: u.createdAt, version: u.version, lastLoginAt: u.lastLoginAt });

/**
 * The version a write was based on: `version` in the body or an `If-Match` header (`"3"`, `W/"3"`
 * or `3`); undefined when neither is sent (the write applies to whatever is current).
 */
export function expectedVersion(body: Rec, ifMatch: string | string[] | undefined, problems: Problem[]): number | undefined {
  if (body.version !== undefined) {
    if (!Number.isInteger(body.version) || (body.version as number) < 1) problems.push({ path: 'version', message: 'version must be a positive integer' });
    else return body.version as number;
  }
  const header = Array.isArray(ifMatch) ? ifMatch[0] : ifMatch;
  if (header === undefined || header.trim() === '*') return undefined;
  const m = /^\s*(?:W\/)?"?(\d+)"?\s*$/.exec(header);
  if (!m) {
    problems.push({ path: 'If-Match', message: 'If-Match must be the user\'s version, e.g. "3"' });
    return undefined;
  }
  return Number(m[1]);
}

/**
 * The users API (docs/contract/design.md, tenancy): list, create, change role / grants / disabled. Admin
 * sessions only; the last enabled admin cannot be demoted or disabled, nor an admin disable or
 * demote themself (409).
 */
export default async function userRoutes(app: FastifyInstance): Promise<void> {

  app.get('/v1/bi/admin/users/:userId', { schema: userSchemas.list }, async () => ({ success: true, users: app.runtime.auth.users.views().map(view) }));

  app.post('/v1/bi/admin/users/:userId', { schema: userSchemas.create }, async (req, reply) => {
    const b = objectBody(req.body);
    const problems: Problem[] = [];
    for (const field of ['username', 'password'] as const) {
      if (typeof b[field] !== 'string' || b[field] === '') problems.push({ path: field, message: `${field} is required` });
    }
    const role = readRole(b.role, problems, true);
    const clients = readClients(b.clients, problems);
    if (problems.length) throw new ValidationError(problems);
    const auth = app.runtime.auth;
    const user = await auth.users.create({ username: b.username as string, password: b.password as string, role: role as Role, cost: auth.settings.passwordCost, by: principalOf(req).userId });
    if (clients?.length) auth.users.grant(user.userId, clients, principalOf(req).userId);
    req.log.info({ userId: user.userId, role, by: principalOf(req).userId }, 'user created');
    return reply.status(201).header('cache-control', 'no-store').send({ success: true, user: view(auth.users.view(user.userId) as UserView) });
  });

  app.patch<{ Params: { targetUserId: string; userId: string } }>('/v1/bi/admin/users/:targetUserId/:userId', { schema: userSchemas.update }, async (req, reply) => {
    const b = objectBody(req.body);
    const problems: Problem[] = [];
    const role = readRole(b.role, problems, false);
    const clients = readClients(b.clients, problems);
    if (b.disabled !== undefined && typeof b.disabled !== 'boolean') problems.push({ path: 'disabled', message: 'disabled must be boolean' });
    const expected = expectedVersion(b, req.headers['if-match'], problems);
    if (problems.length) throw new ValidationError(problems);
    const users = app.runtime.auth.users;
    const target = req.params.targetUserId;
    const before = users.view(target);
    if (!before) throw new NotFoundError(`User ${target} not found`);
    // Two admins editing one user: the second write names the version it read, and loses nothing silently.
    if (expected !== undefined && expected !== before.version) throw new ConflictError(staleUser(target, before.version, expected));
    // An admin never locks themself out: another admin must do it.
    if (target === principalOf(req).userId) {
      if (b.disabled === true) throw new ConflictError(SELF_DISABLE);
      if (role === 'member') throw new ConflictError(SELF_DEMOTE);
    }
    users.update(target, { role, disabled: b.disabled as boolean | undefined }, principalOf(req).userId);
    if (clients) users.setClients(target, clients, principalOf(req).userId);
    req.log.info({ userId: target, role, clients, disabled: b.disabled, by: principalOf(req).userId }, 'user changed');
    const after = users.view(target) as UserView;
    reply.header('etag', `"${after.version}"`);
    return { success: true, user: view(after) };
  });

  // An admin sets a new password for a user (who forgot theirs): every session of the user ends.
  app.post<{ Params: { targetUserId: string; userId: string } }>('/v1/bi/admin/users/:targetUserId/password/:userId', { config: { noStore: true }, schema: userSchemas.resetPassword }, async (req, reply) => {
    const b = objectBody(req.body);
    const problems: Problem[] = [];
    if (typeof b.password !== 'string' || b.password === '') problems.push({ path: 'password', message: 'password is required' });
    const expected = expectedVersion(b, req.headers['if-match'], problems);
    if (problems.length) throw new ValidationError(problems);
    const auth = app.runtime.auth;
    const target = req.params.targetUserId;
    const before = auth.users.view(target);
    if (!before) throw new NotFoundError(`User ${target} not found`);
    if (expected !== undefined && expected !== before.version) throw new ConflictError(staleUser(target, before.version, expected));
    await auth.users.setPassword(target, b.password as string, { cost: auth.settings.passwordCost, by: principalOf(req).userId });
    const after = auth.users.view(target);
    if (!after) throw new NotFoundError(`User ${target} not found`);
    req.log.info({ userId: target, by: principalOf(req).userId }, 'user password reset');
    return reply.header('cache-control', 'no-store').header('etag', `"${after.version}"`).send({ success: true, user: view(after) });
  });

  // Deleting a user: not yourself; their keys are revoked and their sessions end (audited).
  app.delete<{ Params: { targetUserId: string; userId: string } }>('/v1/bi/admin/users/:targetUserId/:userId', { schema: userSchemas.remove }, async (req) => {
    const auth = app.runtime.auth;
    const target = req.params.targetUserId;
    if (!auth.users.get(target)) throw new NotFoundError(`User ${target} not found`);
    if (target === principalOf(req).userId) throw new ConflictError(SELF_DELETE);
    auth.deleteUser(target, principalOf(req).userId);
    req.log.info({ userId: target, by: principalOf(req).userId }, 'user deleted');
    return { success: true, userId: target, deleted: true };
  });
}
