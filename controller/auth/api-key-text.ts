import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/** Every key starts with this 9-character prefix, so secret scanners can recognise it. */
export const API_KEY_PREFIX = 'bictl_sk_';
export const API_KEY_LENGTH = 73;
/** Shown in listings: the first 16 characters (prefix + 7 hex). */
export const KEY_PREFIX_LENGTH = 16;

const SHAPE = /^bictl_sk_[0-9a-f]{64}$/;

function checksum(body56: string): string {
  return crc32(API_KEY_PREFIX + body56).toString(16).padStart(8, '0');
}

/** A new key: prefix, 56 random hex, then the CRC32 (8 hex) of everything before it. */
export function generateApiKey(): string {
  const body = randomBytes(28).toString('hex');
  return `${API_KEY_PREFIX}${body}${checksum(body)}`;
}

/** Shape and checksum, checked before any store lookup: a mistyped or truncated key fails here. */
export function isWellFormedApiKey(key: string): boolean {
  if (key.length !== API_KEY_LENGTH || !SHAPE.test(key)) return false;
  const hex = key.slice(API_KEY_PREFIX.length);
  return checksum(hex.slice(0, 56)) === hex.slice(56);
}

export function keyPrefixOf(key: string): string {
  return key.slice(0, KEY_PREFIX_LENGTH);
}
