import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { API_KEY_PREFIX, generateApiKey, isWellFormedApiKey, keyPrefixOf } from '../../../controller/auth/api-key-text.ts';

describe('API key text', () => {
  it('is bictl_sk_ + 64 lowercase hex, 73 characters, ending in the CRC32 of the rest', () => {
    for (let i = 0; i < 50; i++) {
      const key = generateApiKey();
      expect(key).toMatch(/^bictl_sk_[0-9a-f]{64}$/);
      expect(key).toHaveLength(73);
      expect(key.slice(-8)).toBe(crc32(key.slice(0, 65)).toString(16).padStart(8, '0'));
      expect(isWellFormedApiKey(key)).toBe(true);
    }
    expect(API_KEY_PREFIX).toHaveLength(9);
  });

  it('keyPrefix is the first 16 characters', () => {
    const key = generateApiKey();
    expect(keyPrefixOf(key)).toBe(key.slice(0, 16));
    expect(keyPrefixOf(key)).toMatch(/^bictl_sk_[0-9a-f]{7}$/);
  });

  it('refuses a mistyped, truncated, extended, upper-cased or foreign-prefixed key', () => {
    const key = generateApiKey();
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    expect(isWellFormedApiKey(flip(key, 20))).toBe(false);
    expect(isWellFormedApiKey(flip(key, 72))).toBe(false);
    expect(isWellFormedApiKey(key.slice(0, 72))).toBe(false);
    expect(isWellFormedApiKey(`${key}0`)).toBe(false);
    expect(isWellFormedApiKey(API_KEY_PREFIX + 'A'.repeat(64))).toBe(false);
    expect(isWellFormedApiKey(`xxxxx_sk_${key.slice(9)}`)).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });
});
