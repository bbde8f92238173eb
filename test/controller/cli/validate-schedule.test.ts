import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stringify } from 'yaml';
import { validateDir } from '../../../controller/cli/commands/validate.ts';
import { manifest } from '../../helpers/runtime.ts';
import { minimalPayload } from '../kinds/pipeline/fixtures.ts';

describe('bictl validate: BI_SCHEDULE_MIN_INTERVAL', () => {
  const dirs: string[] = [];
  afterEach(() => {
    vi.unstubAllEnvs();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  function folder(cronExpression: string): string {
    const root = mkdtempSync(join(tmpdir(), 'bi-validate-'));
    dirs.push(root);
    mkdirSync(join(root, 'pipelines'));
    writeFileSync(join(root, 'pipelines', 'p.yaml'), stringify(manifest('Pipeline', 'p', { ...minimalPayload(), schedule: { isEnabled: true, frequency: 'cron', cronExpression } })));
    return root;
  }

  it('reports a schedule firing more often than the minimum, read from the environment', async () => {
    expect(await validateDir(folder('*/20 * * * * *'))).toEqual({
      files: 1,
      problems: ['pipelines/p.yaml: spec.schedule.cronExpression fires every 20s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)'],
      warnings: [],
    });
    vi.stubEnv('BI_SCHEDULE_MIN_INTERVAL', '10s');
    expect(await validateDir(folder('*/20 * * * * *'))).toEqual({ files: 1, problems: [], warnings: [] });
  });
});
