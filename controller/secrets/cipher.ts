import { createCipheriv, createDecipheriv, createHmac, randomBytes, scryptSync } from 'node:crypto';

/** One encrypted value: AES-256-GCM nonce, ciphertext and tag (base64). */
export interface Sealed {
  iv: string;
  ciphertext: string;
  tag: string;
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const MIN_PASSPHRASE = 16;
// A fixed salt is deliberate: the key must be derivable again from the same BI_SECRET_KEY after a restart.
const SCRYPT_SALT = 'bi-controller secrets v1';

/**
 * Turns BI_SECRET_KEY into a 32-byte AES key: 64 hex characters are taken as the key itself,
 * base64 of exactly 32 bytes likewise, anything else of at least 16 characters is a passphrase
 * stretched with scrypt. Throws with a message an operator can act on.
 */
export function deriveKey(secretKey: string): Buffer {
  const s = secretKey.trim();
  if (HEX_KEY.test(s)) return Buffer.from(s, 'hex');
  if (/^[A-Za-z0-9+/]{43}=$/.test(s)) {
    const raw = Buffer.from(s, 'base64');
    if (raw.length === 32) return raw;
  }
  if (s.length < MIN_PASSPHRASE) {
    throw new Error(`BI_SECRET_KEY is too short: use 64 hex characters (openssl rand -hex 32) or a passphrase of at least ${MIN_PASSPHRASE} characters`);
  }
  return scryptSync(s, SCRYPT_SALT, 32, { N: 1 << 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
}

/** A short fingerprint of the key, stored next to each secret, to tell "wrong key" from "tampered". */
export function keyId(key: Buffer): string {
  return createHmac('sha256', key).update('bi-controller key check').digest('hex').slice(0, 16);
}

/** Encrypts `plaintext`; `aad` (the secret's ID) is authenticated, so a ciphertext cannot be moved to another row. */
export function seal(key: Buffer, plaintext: string, aad: string): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return { iv: iv.toString('base64'), ciphertext: ciphertext.toString('base64'), tag: cipher.getAuthTag().toString('base64') };
}

/** Decrypts what `seal` produced; throws when the key, the AAD or any byte differs. */
export function open(key: Buffer, sealed: Sealed, aad: string): string {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  return Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]).toString('utf8');
}
