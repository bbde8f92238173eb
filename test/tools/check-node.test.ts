import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../controller/paths.ts';
// @ts-expect-error a plain .mjs script without types
import { satisfies } from '../../tools/check-node.mjs';

const check = satisfies as (version: string, range: string) => boolean;

describe('engines.node', () => {
  it('reads the comparators package.json uses', () => {
    const range = '>=20.19 <21 || >=22.12';
    expect(['v20.18.3', 'v20.19.0', 'v20.20.2', 'v21.7.0', 'v22.11.0', 'v22.12.0', 'v24.1.0'].map((v) => check(v, range))).toEqual([
      false, true, true, false, false, true, true,
    ]);
    expect(() => check('v20.0.0', '^20')).toThrow('engines.node: cannot read the comparator "^20"');
  });

  it('names the Node this machine runs, and CI checks it before anything else', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
    expect(check(process.version, pkg.engines.node)).toBe(true);
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8');
    expect(ci.indexOf('node tools/check-node.mjs')).toBeGreaterThan(-1);
    expect(ci.indexOf('node tools/check-node.mjs')).toBeLessThan(ci.indexOf('npm ci'));
  });
});
