import { afterEach, describe, expect, it, vi } from 'vitest';
import { bodyShapeProblem, MAX_BODY_CONTAINERS, MAX_BODY_VALUES, MAX_OBJECT_MEMBERS } from '../../api/body-shape.ts';
import { createUserWithKey } from '../helpers/auth.ts';
import { makeTestApp, type TestApp } from '../helpers/runtime.ts';

const MiB = 1024 * 1024;
/** `{<head>"<key>":[<item>,<item>,…]}` of about 1 MiB. */
const bigBody = (head: string, key: string, item: string) => {
  const n = Math.floor((MiB - head.length - key.length - 16) / (item.length + 1));
  return `{${head}"${key}":[${Array(n).fill(item).join(',')}]}`;
};

/** Big bodies are cheap: counted on the text before anything is built (timing goals: bench/). */
describe('1 MiB bodies of empty items', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    vi.restoreAllMocks();
    await t?.close();
  });

  it('are refused with a 400 before JSON.parse builds anything and before validation', async () => {
    t = await makeTestApp();
    const { headers } = await createUserWithKey(t, { role: 'admin' });
    const parse = vi.spyOn(JSON, 'parse');
    const validate = vi.spyOn(t.rt.schemas, 'validate');
    const cases: [string, string][] = [
      ['/v1/sdk/import', bigBody('"name":"x","dataSource":{"dbId":"D2026A00001"},', 'charts', '{}')],
      ['/v1/sdk/import', bigBody('"name":"x",', 'sections', '{"charts":[]}')],
      ['/v1/sdk/client/onboard', bigBody('"clientId":"ACME",', 'vdm', '[]')],
      ['/v1/sdk/client/onboard', bigBody('"clientId":"ACME",', 'vdm', '0')],
    ];
    for (const [url, payload] of cases) {
      expect(payload.length).toBeGreaterThan(MiB - 64);
      const res = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload });
      expect(res.statusCode, url).toBe(400);
      expect(res.json().error).toMatch(/^body holds more than (20000 objects and arrays|100000 values)/);
      expect(parse.mock.calls.filter(([text]) => text === payload)).toEqual([]);
    }
    expect(validate).not.toHaveBeenCalled();
  });

  it('a 1 MiB body of one object with 95,000 keys is refused before JSON.parse and validation', async () => {
    t = await makeTestApp();
    const { headers } = await createUserWithKey(t, { role: 'admin' });
    const parse = vi.spyOn(JSON, 'parse');
    const validate = vi.spyOn(t.rt.schemas, 'validate');
    const keys: string[] = [];
    for (let i = 0, len = 2; len < MiB - 64; i++) {
      keys.push(`"k${i}":1`);
      len += keys[i]!.length + 1;
    }
    const payload = `{${keys.join(',')}}`;
    for (const url of ['/v1/sdk/import', '/v1/sdk/import-pipeline', '/v1/auth/login']) {
      const res = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload });
      expect(res.statusCode, url).toBe(400);
      expect(res.body, url).toContain(`body holds an object with more than ${MAX_OBJECT_MEMBERS} members`);
      expect(parse.mock.calls.filter(([text]) => text === payload)).toEqual([]);
    }
    expect(validate).not.toHaveBeenCalled();
  });

  it('members are counted per object, arrays and nested objects apart', () => {
    const limits = { maxContainers: 100, maxValues: 100, maxDepth: 8, maxMembers: 2 };
    expect(bodyShapeProblem('{"a":1,"b":{"c":1,"d":2},"e":[1,2,3,4]}', limits)).toEqual({ path: 'body', message: 'holds an object with more than 2 members' });
    expect(bodyShapeProblem('{"a":1,"b":{"c":1,"d":2}}', limits)).toBeUndefined();
    expect(bodyShapeProblem('{"a":[1,2,3,4],"b":{"c":"x,y,z","d":2}}', limits)).toBeUndefined();
    expect(bodyShapeProblem('[{"a":1,"b":2},{"a":1,"b":2},{"a":1,"b":2}]', limits)).toBeUndefined();
    expect(bodyShapeProblem('[{"a":1,"b":2},{"a":1,"b":2,"c":3}]', limits)).toEqual({ path: 'body', message: 'holds an object with more than 2 members' });
  });

  it('the count stops at the first limit passed and skips what strings hold', () => {
    const limits = { maxContainers: 4, maxValues: 5, maxDepth: 4 };
    expect(bodyShapeProblem('{"a":[{},{}]}', limits)).toBeUndefined();
    expect(bodyShapeProblem('{"a":[{},{},{}]}', limits)).toEqual({ path: 'body', message: expect.stringMatching(/^holds more than 4 objects and arrays/) });
    expect(bodyShapeProblem('{"a":"{{{{[[[[,,,,,,\\"{{{{"}', limits)).toBeUndefined();
    expect(bodyShapeProblem('[1,2,3,4,5,6]', limits)).toEqual({ path: 'body', message: 'holds more than 5 values' });
    expect(bodyShapeProblem('[[[[[1]]]]]', { ...limits, maxContainers: 9 })).toEqual({ path: 'body', message: 'is nested deeper than 4 levels' });
    expect(MAX_BODY_CONTAINERS).toBeLessThanOrEqual(20_000);
    expect(MAX_BODY_VALUES).toBeLessThanOrEqual(100_000);
  });
});
