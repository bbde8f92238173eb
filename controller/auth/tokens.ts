import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 } from '../hash.ts';

/** A random URL-safe token (256 bits by default) for session IDs, CSRF, access and refresh tokens. */
export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** Compares a presented secret with a stored SHA-256 digest in constant time. */
export function matchesHash(presented: string, storedHash: string): boolean {
  const a = Buffer.from(sha256(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
