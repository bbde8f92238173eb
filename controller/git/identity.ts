/** A commit author or committer. */
export interface GitIdentity {
  name: string;
  email: string;
}

/** Domain of the no-reply addresses given to API users' commits. */
export const NOREPLY_DOMAIN = 'users.noreply.bi-controller.local';

/**
 * A name safe inside a commit header: no control characters (newlines would forge headers),
 * no angle brackets (they delimit the address), trimmed and bounded.
 */
export function sanitizeName(name: string, fallback = 'unknown'): string {
  const clean = name
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f<>]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 100);
  return clean || fallback;
}

/** The local part of a no-reply address: the user ID, reduced to characters an address allows. */
export function noreplyEmail(userId: string): string {
  const local = userId.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[-.]+|[-.]+$/g, '').slice(0, 64) || 'user';
  return `${local}@${NOREPLY_DOMAIN}`;
}

/** The author of an API write: the calling user's name and a no-reply address from their user ID. */
export function userIdentity(actor: { userId: string; username: string }): GitIdentity {
  return { name: sanitizeName(actor.username, sanitizeName(actor.userId, 'user')), email: noreplyEmail(actor.userId) };
}

export function formatIdentity(id: GitIdentity): string {
  return `${sanitizeName(id.name)} <${id.email.replace(/[\s<>]+/g, '')}>`;
}

/** A commit message: no NUL bytes, bounded. */
export function sanitizeMessage(message: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = message.replace(/\u0000/g, '').trim().slice(0, 2000);
  return clean || 'update manifests';
}
