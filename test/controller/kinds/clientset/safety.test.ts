import { afterEach, describe, expect, it } from 'vitest';
import { makeTestRuntime, type TestRuntime } from '../../../helpers/runtime.ts';
import { connectionSet, CORE_MODEL, inputs, tenants, tenantSet } from './fixtures.ts';

let t: TestRuntime | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const csv = (ids: string[]) => `id,displayName\n${ids.map((id) => `${id},${id} Corp`).join('\n')}\n`;
const phase = (key: string) => t?.rt.reconciler.status.get(key)?.phase;
const connName = (key: string) => (t?.rt.db.prepare('SELECT name FROM connections WHERE manifest_key = ?').get(key) as { name: string } | undefined)?.name;
const setRow = (name: string) => t?.rt.clientSets.store.get(name);

describe('ClientSet safety rules', () => {
  it('an unreadable inputsFrom changes nothing: the set keeps its last generated objects and says why', async () => {
    t = await makeTestRuntime();
    t.write('catalog/retail.csv', csv(['ACME', 'BETA']));
    t.write('sets/retail.yaml', connectionSet('retail', { inputsFrom: [{ path: 'catalog/retail.csv' }] }));
    await t.sync();
    t.remove('catalog/retail.csv');
    const report = await t.sync();
    expect(report.pruned).toEqual([]);
    expect([phase('Connection/acme-wh'), phase('Connection/beta-wh')]).toEqual(['Synced', 'Synced']);
    expect(setRow('retail')?.reason).toBe(
      'inputs could not be read, nothing changed: spec.inputsFrom[0].path: catalog/retail.csv does not exist',
    );
  });

  it('an empty input set deletes nothing unless allowEmpty', async () => {
    t = await makeTestRuntime();
    t.write('catalog/retail.csv', csv(['ACME', 'BETA']));
    t.write('sets/retail.yaml', connectionSet('retail', { policy: 'sync', maxDeletePercent: 100, inputsFrom: [{ path: 'catalog/retail.csv' }] }));
    await t.sync();
    t.write('catalog/retail.csv', 'id,displayName\n');
    const held = await t.sync();
    expect(held.pruned).toEqual([]);
    expect(setRow('retail')?.reason).toBe('the input set is empty and allowEmpty is false: 2 tenant(s) are kept');
    t.write('sets/retail.yaml', connectionSet('retail', { policy: 'sync', maxDeletePercent: 100, allowEmpty: true, inputsFrom: [{ path: 'catalog/retail.csv' }] }));
    await t.sync();
    // `sync` offboards a tenant: its Client leaves the desired set; other objects (here its connection) stay until purged.
    expect(t.rt.clientSets.store.tenants('retail').map((x) => [x.inputId, x.gone])).toEqual([['ACME', 'offboarded'], ['BETA', 'offboarded']]);
    expect(phase('Connection/acme-wh')).toBe('Synced');
  });

  it('deletions over maxDeletePercent are held until approved or allowed by --allow-mass-prune', async () => {
    t = await makeTestRuntime();
    const ids = ['A1', 'A2', 'A3', 'A4', 'A5'];
    t.write('sets/retail.yaml', connectionSet('retail', { policy: 'sync', inputs: inputs(...ids) }));
    await t.sync();
    t.write('sets/retail.yaml', connectionSet('retail', { policy: 'sync', inputs: inputs('A1', 'A2', 'A3') }));
    await t.sync();
    expect(setRow('retail')?.reason).toBe('deleting 2 of 5 tenants (40%) is more than maxDeletePercent 10%: held until approved or bictl sync --allow-mass-prune');
    expect(t.rt.clientSets.store.tenants('retail').filter((x) => x.gone).map((x) => [x.inputId, x.gone])).toEqual([['A4', 'orphaned'], ['A5', 'orphaned']]);
    await t.sync({ allowMassPrune: true });
    expect(t.rt.clientSets.store.tenants('retail').filter((x) => x.gone).map((x) => [x.inputId, x.gone])).toEqual([['A4', 'offboarded'], ['A5', 'offboarded']]);
    expect(setRow('retail')?.reason).toBeNull();
  });

  it('create-update keeps a tenant whose input disappeared (orphaned); sync drops its Client from the desired set', async () => {
    t = await makeTestRuntime();
    t.write('core-models/retail-core.yaml', CORE_MODEL);
    t.write('sets/retail.yaml', tenantSet('retail', { maxDeletePercent: 100, inputs: tenants('ACME', 'BETA') }));
    const first = await t.sync();
    expect(first.failed).toEqual([]);
    expect(phase('Client/BETA')).toBe('Synced');
    t.write('sets/retail.yaml', tenantSet('retail', { maxDeletePercent: 100, inputs: tenants('ACME') }));
    const kept = await t.sync();
    expect(kept.pruned).toEqual([]);
    expect(phase('Client/BETA')).toBe('Synced');
    expect(t.rt.clientSets.store.tenants('retail').map((x) => [x.inputId, x.gone])).toEqual([['ACME', null], ['BETA', 'orphaned']]);
    t.write('sets/retail.yaml', tenantSet('retail', { policy: 'sync', maxDeletePercent: 100, inputs: tenants('ACME') }));
    const synced = await t.sync();
    expect(synced.pruned).toEqual(['Client/BETA']);
    expect(phase('Connection/beta-wh')).toBe('Synced');
  });

  it('create-only never updates an existing tenant; a new input is created', async () => {
    t = await makeTestRuntime();
    t.write('sets/retail.yaml', connectionSet('retail', { policy: 'create-only', inputs: inputs('ACME') }));
    await t.sync();
    t.write('sets/retail.yaml', connectionSet('retail', { policy: 'create-only', inputs: [{ id: 'ACME', displayName: 'Renamed' }, ...inputs('BETA')] }));
    await t.sync();
    expect(connName('Connection/acme-wh')).toBe('ACME Corp warehouse');
    expect(connName('Connection/beta-wh')).toBe('BETA Corp warehouse');
  });

  it('a changed input file renders the set again on a delta', async () => {
    t = await makeTestRuntime();
    t.write('catalog/retail.inputs.yaml', '- {id: ACME, displayName: Acme}\n');
    t.write('sets/retail.yaml', connectionSet('retail', { inputsFrom: [{ path: 'catalog/retail.inputs.yaml' }] }));
    await t.sync();
    t.write('catalog/retail.inputs.yaml', '- {id: ACME, displayName: Acme Two}\n');
    const file = t.source.read('catalog/retail.inputs.yaml');
    if (!file) throw new Error('written file not found');
    await t.rt.reconciler.apply({ type: 'delta', files: [file] });
    expect(connName('Connection/acme-wh')).toBe('Acme Two warehouse');
    // The input file itself is data, never a manifest: no status row.
    expect(t.rt.reconciler.listStatus().map((s) => s.key)).toEqual(['ClientSet/retail', 'Connection/acme-wh']);
  });
});

describe('ClientSet input files and the filesystem boundary', () => {
  it('an input file that is a symlink leading outside the root is refused and nothing of it is shown', async () => {
    const { mkdtempSync, symlinkSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    t = await makeTestRuntime();
    const outside = mkdtempSync(join(tmpdir(), 'bi-outside-'));
    writeFileSync(join(outside, 'secret.csv'), 'id,displayName\nTOPSECRET,Top Secret\n');
    t.write('catalog/placeholder.txt', '');
    symlinkSync(join(outside, 'secret.csv'), join(t.manifests, 'catalog/retail.csv'));
    t.write('sets/retail.yaml', connectionSet('retail', { inputsFrom: [{ path: 'catalog/retail.csv' }] }));
    await t.sync();
    rmSync(outside, { recursive: true, force: true });
    expect(setRow('retail')?.reason).toBe('inputs could not be read, nothing changed: spec.inputsFrom[0].path: catalog/retail.csv: not a regular file inside the manifests root');
    expect(t.rt.reconciler.listStatus().map((s) => s.key)).toEqual(['ClientSet/retail']);
  });
});
