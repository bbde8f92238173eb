import type { FastifyInstance } from 'fastify';
import type { Role, UserView } from '../../controller/auth/users.ts';
import { ConflictError, NotFoundError, ValidationError } from '../../controller/errors.ts';
import type { Problem } from '../../controller/types.ts';
import { principalOf } from '../auth/principal.ts';
import { userSchemas } from '../schemas/users.ts';

export const SELF_DISABLE = 'You cannot disable your own account; another admin can';
export const SELF_DEMOTE = 'You cannot remove your own admin role; another admin can';
export const SELF_DELETE = 'You cannot delete your own account; another admin can';
/** A write naming a version the user no longer has (another admin changed it since it was read). */
export const staleUser = (userId: string, current: number, sent: number): string =>
  `User ${userId} was changed by someone else since you read it (version ${current}, yours ${sent}): reload and try again`;

/** A user as the edge checked the body (schemas/api.schema.json `UserRequest`, `UserUpdate`, `PasswordReset`). */
interface UserBody {
  username: string;
  password: string;
  role: Role;
  clients?: string[];
  disabled?: boolean;
  version?: number;
}

/** `clients` (client IDs, checked at the edge) trimmed and uppercased, once each. */
const readClients = (value: string[] | undefined): string[] | undefined => (value === undefined ? undefined : [...new Set(value.map((c) => c.trim().toUpperCase()))]);

const view = (u: UserView) => ({ userId: u.userId, username: u.username, role: u.role, clients: u.clients, disabled: u.disabled, createdAt: u.createdAt, version: u.version, lastLoginAt: u.lastLoginAt });

/**
 * The version a write was based on: `version` in the body or an `If-Match` header (`"3"`, `W/"3"`
 * or `3`); undefined when neither is sent (the write applies to whatever is current).
 */
export function expectedVersion(body: { version?: number }, ifMatch: string | string[] | undefined, problems: Problem[]): number | undefined {
  if (body.version !== undefined) return body.version;
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

  app.post<{ Body: UserBody }>('/v1/bi/admin/users/:userId', { schema: userSchemas.create }, async (req, reply) => {
    const b = req.body;
    const role = b.role;
    const clients = readClients(b.clients);
    const auth = app.runtime.auth;
    const user = await auth.users.create({ username: b.username, password: b.password, role, cost: auth.settings.passwordCost, by: principalOf(req).userId });
    if (clients?.length) auth.users.grant(user.userId, clients, principalOf(req).userId);
    req.log.info({ userId: user.userId, role, by: principalOf(req).userId }, 'user created');
    return reply.status(201).header('cache-control', 'no-store').send({ success: true, user: view(auth.users.view(user.userId) as UserView) });
  });

  app.patch<{ Params: { targetUserId: string; userId: string }; Body: Partial<UserBody> }>('/v1/bi/admin/users/:targetUserId/:userId', { schema: userSchemas.update }, async (req, reply) => {
    const b = req.body;
    const problems: Problem[] = [];
    const role = b.role;
    const clients = readClients(b.clients);
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
    users.update(target, { role, disabled: b.disabled }, principalOf(req).userId);
    if (clients) users.setClients(target, clients, principalOf(req).userId);
    req.log.info({ userId: target, role, clients, disabled: b.disabled, by: principalOf(req).userId }, 'user changed');
    const after = users.view(target) as UserView;
    reply.header('etag', `"${after.version}"`);
    return { success: true, user: view(after) };
  });

  // An admin sets a new password for a user (who forgot theirs): every session of the user ends.
  app.post<{ Params: { targetUserId: string; userId: string }; Body: { password: string; version?: number } }>('/v1/bi/admin/users/:targetUserId/password/:userId', { config: { noStore: true }, schema: userSchemas.resetPassword }, async (req, reply) => {
    const b = req.body;
    const problems: Problem[] = [];
    const expected = expectedVersion(b, req.headers['if-match'], problems);
    if (problems.length) throw new ValidationError(problems);
    const auth = app.runtime.auth;
    const target = req.params.targetUserId;
    const before = auth.users.view(target);
    if (!before) throw new NotFoundError(`User ${target} not found`);
    if (expected !== undefined && expected !== before.version) throw new ConflictError(staleUser(target, before.version, expected));
    await auth.users.setPassword(target, b.password, { cost: auth.settings.passwordCost, by: principalOf(req).userId });
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
