import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.ts';
import { connectionSet, inputs } from '../kinds/clientset/fixtures.ts';

let dir: string;
let flags: string[];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'bi-cli-set-'));
  mkdirSync(join(dir, 'manifests'));
  flags = ['--manifests', join(dir, 'manifests'), '--db', join(dir, 'data', 'bi.sqlite')];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('bictl diff with a ClientSet', () => {
  it('lists each tenant of the set with its action; after a sync, a changed input shows as an update', async () => {
    const put = (set: unknown) => writeFileSync(join(dir, 'manifests', 'retail.yaml'), stringify(set));
    put(connectionSet('retail', { inputs: inputs('ACME', 'BETA') }));
    const first = await runCli(['diff', ...flags]);
    expect(first.out).toMatch(/create\s+ClientSet\/retail#ACME\s+retail\.yaml/);
    expect(first.out).toMatch(/create\s+ClientSet\/retail#BETA\s+retail\.yaml/);
    expect((await runCli(['sync', ...flags])).out).toBe('3 applied, 0 unchanged, 0 pruned, 0 failed, 0 invalid');
    put(connectionSet('retail', { inputs: [...inputs('ACME'), { id: 'BETA', displayName: 'Beta Two' }] }));
    const second = await runCli(['diff', ...flags]);
    expect(second.out).toMatch(/update\s+ClientSet\/retail#BETA\s+retail\.yaml/);
    expect(second.out).not.toMatch(/ClientSet\/retail#ACME/);
  });
});
