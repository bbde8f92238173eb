import { afterEach, describe, expect, it } from 'vitest';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';
import { connectionSet, inputs } from './fixtures.ts';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

function rows(rt: TestRuntime) {
  return rt.rt.reconciler.listStatus().map((s) => ({ key: s.key, phase: s.phase, generatedBy: s.generatedBy, inputId: s.inputId }));
}

describe('ClientSet: generated desired state', () => {
  it('generates one object per input, each with its own status row, nothing written to disk', async () => {
    t = await makeTestRuntime();
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: inputs('ACME2') }));
    t.write('catalog/retail.csv', 'id,displayName\nBETA,Beta Inc\nGAMMA,Gamma Ltd\n');
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: inputs('ACME2'), inputsFrom: [{ path: 'catalog/retail.csv' }] }));
    const report = await t.sync();
    expect(report.applied.sort()).toEqual(['ClientSet/retail', 'Connection/acme2-wh', 'Connection/beta-wh', 'Connection/gamma-wh']);
    expect(rows(t)).toEqual([
      { key: 'ClientSet/retail', phase: 'Synced', generatedBy: null, inputId: null },
      { key: 'Connection/acme2-wh', phase: 'Synced', generatedBy: 'ClientSet/retail', inputId: 'ACME2' },
      { key: 'Connection/beta-wh', phase: 'Synced', generatedBy: 'ClientSet/retail', inputId: 'BETA' },
      { key: 'Connection/gamma-wh', phase: 'Synced', generatedBy: 'ClientSet/retail', inputId: 'GAMMA' },
    ]);
    const conn = t.rt.db.prepare("SELECT name, account_url FROM connections WHERE manifest_key = 'Connection/beta-wh'").get();
    expect(conn).toEqual({ name: 'Beta Inc warehouse', account_url: 'https://beta.snowflakecomputing.com' });
    // A no-op resync changes nothing.
    const again = await t.sync();
    expect(again.applied).toEqual([]);
    expect(again.pruned).toEqual([]);
  });

  it('an input that fails to render or validate is Invalid; the others apply', async () => {
    t = await makeTestRuntime();
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: [...inputs('GOOD'), { id: 'BAD' }] }));
    await t.sync();
    const bad = t.rt.reconciler.status.get('ClientSet/retail#BAD');
    expect(bad?.phase).toBe('Invalid');
    expect(bad?.message).toContain('undefined variable: input.displayName');
    expect(t.rt.reconciler.status.get('Connection/good-wh')?.phase).toBe('Synced');
  });

  it('a generated object never overwrites a file object of the same key: that input is Invalid naming the file', async () => {
    t = await makeTestRuntime();
    t.write('connections/beta.yaml', manifest('Connection', 'beta-wh', { name: 'Hand made', vendor: 'SNOWFLAKE', accountUrl: 'https://hand.snowflakecomputing.com', warehouse: 'W', database: 'D', schema: 'S', username: 'u', passwordEnv: 'BI_CONN_HAND' }));
    t.write('sets/retail.yaml', connectionSet('retail', { inputs: inputs('ACME2', 'BETA') }));
    await t.sync();
    expect(t.rt.reconciler.status.get('ClientSet/retail#BETA')).toMatchObject({ phase: 'Invalid', message: 'Connection/beta-wh is already defined in connections/beta.yaml' });
    expect(t.rt.reconciler.status.get('Connection/beta-wh')).toMatchObject({ phase: 'Synced', generatedBy: null, path: 'connections/beta.yaml' });
    const conn = t.rt.db.prepare("SELECT name FROM connections WHERE manifest_key = 'Connection/beta-wh'").get();
    expect(conn).toEqual({ name: 'Hand made' });
    expect(t.rt.reconciler.status.get('Connection/acme2-wh')?.phase).toBe('Synced');
  });
});
