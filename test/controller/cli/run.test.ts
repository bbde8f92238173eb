import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/cli.ts';
import { FakeEngine } from '../../helpers/fake-engine.ts';
import { manifest } from '../../helpers/runtime.ts';
import { minimalPayload } from '../kinds/pipeline/fixtures.ts';
import { openStore } from '../../../controller/store/db.ts';

describe('bictl run', () => {
  let dir: string;
  let flags: string[];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bi-cli-run-'));
    const manifests = join(dir, 'manifests');
    mkdirSync(manifests);
    flags = ['--manifests', manifests, '--db', join(dir, 'data', 'bi.sqlite')];
    writeFileSync(join(manifests, 'orders.yaml'), stringify(manifest('Pipeline', 'orders', minimalPayload('Orders'))));
    expect((await runCli([...flags, 'sync'])).code).toBe(0);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const pipelineId = () => {
    const db = openStore(join(dir, 'data', 'bi.sqlite'));
    try {
      return (db.prepare('SELECT pipeline_id FROM pipelines').get() as { pipeline_id: string }).pipeline_id;
    } finally {
      db.close();
    }
  };

  it('--wait prints the step table as it goes and exits 0 when the run succeeded (by manifest name, trigger cli)', async () => {
    const r = await runCli([...flags, 'run', 'orders', '--wait'], { engine: new FakeEngine({ rows: 4, rejectsPerStep: 1 }) });
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^RUN-\\d+ started for ${pipelineId()}$`));
    expect(lines[1]).toMatch(/^STEP\s+TYPE\s+STATUS\s+ROWS IN\s+ROWS OUT\s+REJECTED\s+MS$/);
    expect(lines.slice(2, 4)).toEqual([expect.stringMatching(/^Source\s+source\s+succeeded\s+0\s+4\s+0\s+1$/), expect.stringMatching(/^Load\s+load\s+succeeded\s+4\s+3\s+1\s+1$/)]);
    expect(lines.at(-1)).toMatch(/^RUN-\d+ succeeded: 4 read, 3 written, 1 rejected in \d+ ms$/);
    const db = openStore(join(dir, 'data', 'bi.sqlite'));
    try {
      expect(db.prepare('SELECT trigger, status FROM pipeline_runs').all()).toEqual([{ trigger: 'cli', status: 'succeeded' }]);
    } finally {
      db.close();
    }
  });

  it('takes the pipeline ID too; a failed run exits 1 with the error', async () => {
    const r = await runCli([...flags, 'run', pipelineId()], { engine: new FakeEngine({ failAt: { index: 1, error: 'relation "t" does not exist' } }) });
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^RUN-\d+ started for DP-\d+\nRUN-\d+ failed: 3 read, 0 written, 0 rejected in \d+ ms$/);
    expect(r.err).toMatch(/^bictl run: RUN-\d+ failed: Load: relation "t" does not exist$/);
  });

  it('an unknown pipeline exits 2 saying what to give', async () => {
    const r = await runCli([...flags, 'run', 'nope']);
    expect(r).toEqual({ code: 2, out: '', err: 'bictl run: no pipeline nope (give its ID or its manifest name; bictl sync applies the manifests first)' });
  });
});
