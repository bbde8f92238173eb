import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '../../../controller/auth/passwords.ts';

const cheap = { N: 1024, r: 8, p: 1 };

describe('passwords (scrypt)', () => {
  it('hashes to a self-describing salted scrypt string that verifies only the same password', async () => {
    const h1 = await hashPassword('correct horse', cheap);
    const h2 = await hashPassword('correct horse', cheap);
    expect(h1).toMatch(/^scrypt\$1024\$8\$1\$[A-Za-z0-9+/=]+\$[A-Za-z0-9+/=]+$/);
    expect(h1).not.toBe(h2);
    expect(h1).not.toContain('correct horse');
    expect(await verifyPassword('correct horse', h1)).toBe(true);
    expect(await verifyPassword('correct horsE', h1)).toBe(false);
    expect(await verifyPassword('', h1)).toBe(false);
  });

  it('uses N=2^15 by default', async () => {
    expect(await hashPassword('x')).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  it('never matches a malformed hash', async () => {
    expect(await verifyPassword('x', 'plain')).toBe(false);
    expect(await verifyPassword('x', 'scrypt$0$8$1$AA==$AA==')).toBe(false);
    expect(await verifyPassword('x', 'bcrypt$1$2$3$4$5')).toBe(false);
  });
});
