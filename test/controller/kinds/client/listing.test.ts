import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../../../controller/errors.ts';
import { pageRowidsSql, readListQuery } from '../../../../controller/kinds/client/listing.ts';
import { makeTestRuntime, type TestRuntime } from '../../../helpers/runtime.ts';

describe('client listing query', () => {
  let t: TestRuntime | undefined;
  afterEach(async () => t?.close());

  // The query's shape (page, limit, status, search's length, sort, order) is checked at the edge: test/api/edge-validation.test.ts.
  it('compiles search case-insensitively, and gives the sort its direction', () => {
    const q = readListQuery({ page: 3, limit: 1000, status: 'DELETED', search: '^ac' });
    expect({ page: q.page, limit: q.limit, status: q.status }).toEqual({ page: 3, limit: 1000, status: 'DELETED' });
    expect(q.search?.test('ACME')).toBe(true);
    expect(q.search?.test('GLOBEX')).toBe(false);
    expect(readListQuery({ page: 1, limit: 100, sort: 'clientName' }).sort).toEqual({ field: 'clientName', dir: 'asc' });
    expect(readListQuery({ page: 1, limit: 100, sort: 'onboardedDate', order: 'asc' }).sort).toEqual({ field: 'onboardedDate', dir: 'asc' });
    // The listing's own order (newest onboarding first) is no sort: its index walk.
    expect(readListQuery({ page: 1, limit: 100, sort: 'onboardedDate' }).sort).toBeUndefined();
  });

  it('a search that is not a valid RE2 pattern is a ValidationError naming search', () => {
    expect(() => readListQuery({ page: 1, limit: 100, search: '(unclosed' })).toThrow(ValidationError);
    expect(() => readListQuery({ page: 1, limit: 100, search: '(unclosed' })).toThrow(/^search is not a valid regular expression: /);
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
