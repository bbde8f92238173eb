import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ROOT } from '../../../controller/paths.ts';
import { runCli } from '../../helpers/cli.ts';
import { manifest } from '../../helpers/runtime.ts';

describe('bictl', () => {
  let dir: string;
  let manifests: string;
  let flags: string[];
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bi-cli-'));
    manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    flags = ['--manifests', manifests, '--db', join(dir, 'data', 'bi.sqlite')];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const put = (rel: string, content: unknown) => writeFileSync(join(manifests, rel), typeof content === 'string' ? content : stringify(content));

  it('validate passes on the shipped example manifests', async () => {
    const r = await runCli(['validate', 'manifests']);
    // However many examples ship: every one valid (input files such as catalog/*.csv are not manifests).
    expect(r).toEqual({ code: 0, out: expect.stringMatching(/^\d+ manifest\(s\) valid$/), err: '' });
  });

  it('validate exits 1 listing every problem with its file and field path', async () => {
    put('ok.yaml', manifest('CoreModel', 'ok', { name: 'OK' }));
    put('bad.yaml', manifest('Connection', 'bad', { vendor: 'ORACLE' }));
    put('broken.yaml', 'a: [');
    put('dup.yaml', manifest('CoreModel', 'ok', { name: 'again' }));
    const r = await runCli(['validate', manifests]);
    expect(r.code).toBe(1);
    expect(r.err.split('\n')).toEqual([
      'bad.yaml: spec.name is required (line 5, column 1)',
      'bad.yaml: spec.vendor must be one of SNOWFLAKE, POSTGRESQL (line 6, column 3)',
      expect.stringMatching(/^broken\.yaml: YAML syntax error: .*\(line 1, column 5\)$/),
      'ok.yaml: CoreModel/ok is already defined in dup.yaml',
      '4 problem(s) in 4 file(s)',
    ]);
  });

  const typos = [
    'apiVersion: bi.controller/v1',
    'kind: Dashboard',
    'metadata:',
    '  name: typos',
    '  lables: {team: sales}',
    'spec:',
    '  name: Typos',
    '  descripton: sales by region',
    '  tagz: [sales]',
    '  dataSource: {dbId: D2026A00001}',
    '  charts:',
    '    - type: bar',
    '      measures: [revenue]',
    '      dimensions: [region]',
    '      colour: "#ff0000"',
    '',
  ].join('\n');

  it('validate warns of every unknown field with the nearest known name and its line and column, and passes', async () => {
    put('typos.yaml', typos);
    const r = await runCli(['validate', manifests]);
    expect(r).toEqual({
      code: 0,
      out: '1 manifest(s) valid, 4 warning(s)',
      err: [
        'typos.yaml: warning: metadata.lables is an unknown field (did you mean labels?) (line 5, column 3)',
        'typos.yaml: warning: spec.charts[0].colour is an unknown field (line 15, column 7)',
        'typos.yaml: warning: spec.descripton is an unknown field (did you mean description?) (line 8, column 3)',
        'typos.yaml: warning: spec.tagz is an unknown field (did you mean tags?) (line 9, column 3)',
      ].join('\n'),
    });
  });

  it('validate --strict (or BI_STRICT_MANIFESTS=true) makes unknown fields errors: exit 1', async () => {
    put('typos.yaml', typos);
    for (const r of [await runCli(['validate', '--strict', manifests]), await runCli(['validate', manifests], { env: { BI_STRICT_MANIFESTS: 'true' } })]) {
      expect(r.code).toBe(1);
      expect(r.err.split('\n')).toEqual([
        'typos.yaml: metadata.lables is an unknown field (did you mean labels?) (line 5, column 3)',
        '1 problem(s) in 1 file(s)',
      ]);
    }
    // The envelope is checked first; with it fixed, the spec's unknown fields are the errors.
    put('typos.yaml', typos.replace('  lables: {team: sales}\n', ''));
    const r = await runCli(['validate', '--strict', manifests]);
    expect(r.err.split('\n')).toEqual([
      'typos.yaml: spec.charts[0].colour is an unknown field (line 14, column 7)',
      'typos.yaml: spec.descripton is an unknown field (did you mean description?) (line 7, column 3)',
      'typos.yaml: spec.tagz is an unknown field (did you mean tags?) (line 8, column 3)',
      '3 problem(s) in 1 file(s)',
    ]);
  });

  it('validate gives JSON syntax errors as line and column, without quoting the file', async () => {
    put('c.json', '{\n  "apiVersion": "bi.controller/v1",\n  "kind": "CoreModel"\n  "metadata": {"name": "c"}\n}\n');
    const r = await runCli(['validate', manifests]);
    expect(r.err.split('\n')).toEqual(["c.json: JSON syntax error: expected ',' or '}' after a property value (line 4, column 3)", '1 problem(s) in 1 file(s)']);
  });

  it('validate also runs each kind’s rules that need no store (what a schema cannot say)', async () => {
    put('p.yaml', manifest('Pipeline', 'p', {
      name: 'P',
      source: { connectionId: 'D2026A00001', type: 'api' },
      destination: { connectionId: 'D2026A00001' },
      steps: [{ type: 'validate', config: { rules: [{ field: 'code', rule: 'regex', params: { pattern: '([' } }] } }],
    }));
    put('d.yaml', manifest('Dashboard', 'd', {
      name: 'D',
      dataSource: { dbId: 'D2026A00001' },
      charts: [{ title: 'A', type: 'bar', measures: ['x'], dimensions: ['y'], drillDown: 'Nope' }],
    }));
    const r = await runCli(['validate', manifests]);
    expect(r.code).toBe(1);
    const lines = r.err.split('\n');
    expect(lines.some((l) => l.startsWith('d.yaml: spec.charts[0].drillDown'))).toBe(true);
    expect(lines.some((l) => l.startsWith('p.yaml: spec.steps[0].config.rules[0].params.pattern'))).toBe(true);
    expect(lines.at(-1)).toBe('2 problem(s) in 2 file(s)');
  });

  it('diff shows the plan, sync applies it, and a second diff has nothing to do', async () => {
    put('a.yaml', manifest('CoreModel', 'a', { name: 'A' }));
    put('c.yaml', manifest('Connection', 'c', { name: 'C' }));
    const diff = await runCli(['diff', ...flags]);
    expect(diff.code).toBe(0);
    expect(diff.out).toMatch(/create\s+Connection\/c\s+c\.yaml/);
    expect(diff.out).toMatch(/2 to create, 0 to update, 0 to prune, 0 invalid$/);
    const sync = await runCli(['sync', ...flags]);
    expect(sync).toEqual({ code: 0, out: '2 applied, 0 unchanged, 0 pruned, 0 failed, 0 invalid', err: '' });
    expect((await runCli(['diff', ...flags])).out).toBe('no changes');
    expect((await runCli(['sync', ...flags])).out).toBe('0 applied, 2 unchanged, 0 pruned, 0 failed, 0 invalid');
  });

  it('sync refuses a mass prune until --allow-mass-prune', async () => {
    for (const n of ['a', 'b', 'c']) put(`${n}.yaml`, manifest('CoreModel', n, { name: n }));
    await runCli(['sync', ...flags]);
    for (const n of ['a', 'b', 'c']) unlinkSync(join(manifests, `${n}.yaml`));
    const refused = await runCli(['sync', ...flags]);
    expect(refused.code).toBe(1);
    expect(refused.err).toBe('mass prune refused: 3 of 3 objects would be removed; run bictl sync --allow-mass-prune to confirm');
    const diff = await runCli(['diff', ...flags]);
    expect(diff.out).toMatch(/0 to create, 0 to update, 3 to prune, 0 invalid$/);
    const confirmed = await runCli(['sync', '--allow-mass-prune', ...flags]);
    expect(confirmed).toEqual({ code: 0, out: '0 applied, 0 unchanged, 3 pruned, 0 failed, 0 invalid', err: '' });
  });

  it('validate <missing path> exits 1 naming the path, and validates one file given on its own', async () => {
    const missing = join(dir, 'no-such-folder');
    const r = await runCli(['validate', missing]);
    expect(r).toEqual({ code: 1, out: '', err: `bictl: ${missing}: no such file or directory` });
    put('one.yaml', manifest('CoreModel', 'one', { name: 'One' }));
    put('bad.yaml', manifest('Connection', 'bad', { vendor: 'ORACLE' }));
    expect(await runCli(['validate', join(manifests, 'one.yaml')])).toEqual({ code: 0, out: '1 manifest(s) valid', err: '' });
    const bad = await runCli(['validate', join(manifests, 'bad.yaml')]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('bad.yaml: spec.vendor must be one of SNOWFLAKE, POSTGRESQL');
  });

  it('--version prints the version of package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) expect(await runCli([flag])).toEqual({ code: 0, out: version, err: '' });
  });

  it('prints help for every command', async () => {
    for (const cmd of ['serve', 'validate', 'diff', 'sync']) {
      const r = await runCli([cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.out).toContain(`Usage: bictl ${cmd}`);
    }
  });
});
