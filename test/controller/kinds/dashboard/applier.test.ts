import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readDashboard } from '../../../../controller/kinds/dashboard/store.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';

describe('example manifests', () => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await makeTestRuntime();
  });
  afterEach(async () => t.close());

  it('applies manifests/dashboards/regional-sales.yaml with the example connection', async () => {
    const root = join(import.meta.dirname, '../../../../manifests');
    cpSync(join(root, 'connections'), join(t.manifests, 'connections'), { recursive: true });
    cpSync(join(root, 'dashboards'), join(t.manifests, 'dashboards'), { recursive: true });
    await t.sync();
    const status = t.rt.reconciler.listStatus({ kind: 'Dashboard' });
    expect(status.map((s) => [s.key, s.phase, s.message])).toEqual([['Dashboard/regional-sales', 'Synced', '']]);
    const view = readDashboard(t.rt.db, String(status[0].resourceIds.facadeId));
    console.log(JSON.stringify(view, null, 1));
  });
});
