import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManifestNames } from '../../../controller/writers/free-names.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';

describe('ManifestNames', () => {
  let t: TestRuntime;
  let names: ManifestNames;
  beforeEach(async () => {
    t = await makeTestRuntime();
    names = new ManifestNames({ kind: 'CoreModel', dir: 'core', locks: t.rt.locks, status: t.rt.reconciler.status, writer: t.rt.writer });
  });
  afterEach(async () => t.close());

  it('suffixes names held by a file, a live object or an import in flight', async () => {
    t.write('core/sales.yaml', manifest('CoreModel', 'sales', { name: 'S' }));
    await t.sync();
    expect(await names.peek('sales')).toBe('sales-2');
    const reserved = await Promise.all([names.reserve('sales'), names.reserve('sales'), names.reserve('sales')]);
    expect(reserved).toEqual(['sales-2', 'sales-3', 'sales-4']);
    expect(names.relPath('sales-2')).toBe('core/sales-2.yaml');
  });

  it('peek reserves nothing; a freed name is offered again', async () => {
    expect(await names.peek('x')).toBe('x');
    expect(await names.peek('x')).toBe('x');
    const first = await names.reserve('x');
    const second = await names.reserve('x');
    expect([first, second]).toEqual(['x', 'x-2']);
    names.release('x', first, true);
    expect(await names.reserve('x')).toBe('x');
  });
});
