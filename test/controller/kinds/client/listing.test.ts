import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../controller/errors.ts';
import { pageRowidsSql, parseListQuery } from '../../../../controller/kinds/client/listing.ts';
import { makeTestRuntime, type TestRuntime } from '../../../helpers/runtime.ts';

describe('client listing query', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => t?.close());

  it('defaults page 1 and limit 100, uppercases status, compiles search case-insensitively', () => {
    expect(parseListQuery({})).toEqual({ page: 1, limit: 100, status: undefined, search: undefined });
    const q = parseListQuery({ page: '3', limit: '1000', status: 'deleted', search: '^ac' });
    expect({ page: q.page, limit: q.limit, status: q.status }).toEqual({ page: 3, limit: 1000, status: 'DELETED' });
    expect(q.search?.test('ACME')).toBe(true);
    expect(q.search?.test('GLOBEX')).toBe(false);
  });

  it('names every bad value at once', () => {
    try {
      parseListQuery({ page: '1.5', limit: '0', status: 'x', search: 'a'.repeat(257) });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).message).toBe(
        'page must be a positive integer; limit must be an integer from 1 to 1000; status must be one of ACTIVE, FAILED, SUSPENDED, OFFBOARDED, DELETED; search must be at most 256 characters',
      );
    }
  });

  it('walks a covering index for every page, from either end, with or without a status', async () => {
    t = await makeTestRuntime();
    for (const byStatus of [false, true]) {
      for (const fromEnd of [false, true]) {
        const plan = t.rt.db.prepare(`EXPLAIN QUERY PLAN ${pageRowidsSql(byStatus, fromEnd)}`).all({ status: 'ACTIVE', limit: 1, offset: 0 }) as { detail: string }[];
        expect(plan.map((p) => p.detail)).toEqual([byStatus ? 'SEARCH clients USING COVERING INDEX clients_status (status=?)' : 'SCAN clients USING COVERING INDEX clients_listing']);
      }
    }
  });
});
