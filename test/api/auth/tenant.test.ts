import { describe, expect, it } from 'vitest';
import { statusOf } from '../../../api/errors.ts';
import { assertTenant } from '../../../controller/usecases/tenant.ts';
import type { Principal } from '../../../api/auth/types.ts';

const base: Principal = { userId: 'U2026A00001', username: 'svc', role: 'member', via: 'apiKey', keyId: 'SK2026A00001' };

describe('assertTenant', () => {
  it('lets an unscoped key or a session act for any client', () => {
    expect(() => assertTenant(base, 'ACME')).not.toThrow();
    expect(() => assertTenant({ ...base, via: 'session', keyId: undefined }, 'OTHER')).not.toThrow();
  });

  it('lets a scoped key act for its own client (case-insensitively)', () => {
    expect(() => assertTenant({ ...base, clientScope: 'ACME' }, 'acme')).not.toThrow();
  });

  it('refuses another client with a 403 naming the scope', () => {
    let err: unknown;
    try {
      assertTenant({ ...base, clientScope: 'ACME' }, 'GLOBEX');
    } catch (e) {
      err = e;
    }
    expect((err as Error).message).toBe('API key is scoped to client ACME');
    expect(statusOf(err)).toBe(403);
  });
});
