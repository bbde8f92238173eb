import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../controller/auth/principal.ts';
import { effectiveTenants, tenantsOf, withinTenants } from '../../../controller/authz/index.ts';

describe('effective tenants = the user\'s current rights ∩ the key\'s scope', () => {
  const admin = { role: 'admin' as const, clients: [] };
  const member = { role: 'member' as const, clients: ['ACME', 'GLOBEX'] };
  it.each([
    ['admin session', admin, undefined, 'session', 'all'],
    ['admin key', admin, undefined, 'apiKey', 'all'],
    ['admin key scoped', admin, 'ACME', 'apiKey', ['ACME']],
    ['member session', member, undefined, 'session', ['ACME', 'GLOBEX']],
    ['member key scoped to a granted client', member, 'ACME', 'apiKey', ['ACME']],
    ['member key scoped to a client no longer granted', member, 'INITECH', 'apiKey', []],
    ['member key without scope', member, undefined, 'apiKey', []],
  ] as const)('%s', (_name, rights, scope, via, expected) => {
    expect(effectiveTenants(rights, scope, via)).toEqual(expected);
  });

  it('a principal built without tenants (CLI, tests) gets the narrowest reading, and nothing is within no tenants', () => {
    const base: Principal = { userId: 'U2026A00001', username: 'u', role: 'member', via: 'apiKey' };
    expect(tenantsOf(base)).toEqual([]);
    expect(tenantsOf({ ...base, clientScope: 'ACME' })).toEqual(['ACME']);
    expect(tenantsOf({ ...base, role: 'admin' })).toBe('all');
    expect(withinTenants({ ...base, tenants: ['ACME'] }, null)).toBe(false);
    expect(withinTenants({ ...base, tenants: ['ACME'] }, 'ACME')).toBe(true);
    expect(withinTenants({ ...base, tenants: 'all' }, null)).toBe(true);
  });
});
