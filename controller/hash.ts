import { createHash } from 'node:crypto';

/** SHA-256 hex digest (strings as UTF-8): manifest content hashes, stored tokens and keys. */
export function sha256(data: string | Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}
