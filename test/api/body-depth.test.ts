import { describe, expect, it } from 'vitest';
import { MAX_BODY_DEPTH, nestedDeeperThan } from '../../api/app.ts';
import { makeTestApp } from '../helpers/runtime.ts';

const nested = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { a: v };
  return v;
};

describe('JSON body depth guard', () => {
  it('counts container depth without recursion', () => {
    expect(nestedDeeperThan({ a: [1, { b: 2 }] }, 3)).toBe(false);
    expect(nestedDeeperThan({ a: [1, { b: [] }] }, 3)).toBe(true);
    expect(nestedDeeperThan(nested(100_000) as object, MAX_BODY_DEPTH)).toBe(true);
  });

  it('answers 400 with the field, not a 500, for a body nested thousands deep', async () => {
    const t = await makeTestApp();
    try {
      const payload = `{"name":"x","charts":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
      const res = await t.app.inject({ method: 'POST', url: '/v1/auth/login', headers: { 'content-type': 'application/json' }, payload });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({ success: false, error: `body is nested deeper than ${MAX_BODY_DEPTH} levels`, code: 'validation', problems: expect.any(Array) });
    } finally {
      await t.close();
    }
  });
});
