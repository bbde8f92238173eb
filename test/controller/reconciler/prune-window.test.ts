import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PRUNE_WINDOW_MS } from '../../../controller/reconciler/prune-guard.ts';
import { manifest, makeTestRuntime, type TestRuntime } from '../../helpers/runtime.ts';

const N = 8;
const paths = Array.from({ length: N }, (_, i) => `connections/c${i + 1}.yaml`);

describe('the mass-prune guard across batches of removals', () => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await makeTestRuntime();
    paths.forEach((p, i) => t.write(p, manifest('CoreModel', `c${i + 1}`, { name: `C${i + 1}` })));
    await t.sync();
  });
  afterEach(() => t.close());

  const phases = () => paths.map((_, i) => t.rt.reconciler.status.get(`CoreModel/c${i + 1}`)?.phase);
  const models = () => (t.rt.db.prepare('SELECT COUNT(*) AS n FROM core_models').get() as { n: number }).n;
  /** What a folder watcher delivers: removals of some files, one batch. */
  const removeBatch = (batch: string[]) => {
    batch.forEach((p) => t.remove(p));
    return t.rt.reconciler.apply({ type: 'delta', files: [], removed: batch, trickle: true });
  };

  it('an emptied folder delivered in several batches within the window prunes nothing until confirmed', async () => {
    const first = await removeBatch(paths.slice(0, 1));
    expect(first.pruned).toEqual([]);
    expect(first.pruneBlocked).toBeUndefined();
    expect(phases()).toEqual(Array(N).fill('Synced'));
    const second = await removeBatch(paths.slice(1, 3));
    expect(second.pruned).toEqual([]);
    const third = await removeBatch(paths.slice(3));
    expect(third.pruned).toEqual([]);
    expect(third.pruneBlocked).toMatchObject({ keys: expect.arrayContaining(['CoreModel/c1', 'CoreModel/c8']), live: N });
    expect(third.pruneBlocked?.keys).toHaveLength(N);
    // The window closes: still nothing goes.
    expect(t.scheduler.delays).toContain(PRUNE_WINDOW_MS);
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(models()).toBe(N);
    expect(t.rt.reconciler.pruneBlocked?.keys).toHaveLength(N);
    expect(t.rt.reconciler.status.get('CoreModel/c1')?.message).toBe(
      'mass prune refused: 8 of 8 objects would be removed; confirm with bictl sync --allow-mass-prune',
    );
    const confirmed = await t.sync({ allowMassPrune: true });
    expect(confirmed.pruned).toHaveLength(N);
    expect(models()).toBe(0);
  });

  it('a removal within the share is pruned once the window closes', async () => {
    const r = await removeBatch(paths.slice(0, 2));
    expect(r.pruned).toEqual([]);
    expect(t.rt.reconciler.status.get('CoreModel/c1')?.phase).toBe('Synced');
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(phases()).toEqual(['Pruned', 'Pruned', ...Array(N - 2).fill('Synced')]);
    expect(models()).toBe(N - 2);
  });

  it('a held removal whose file comes back within the window is not pruned', async () => {
    await removeBatch(paths.slice(0, 1));
    t.write(paths[0], manifest('CoreModel', 'c1', { name: 'C1' }));
    await t.rt.reconciler.apply({ type: 'delta', files: [{ path: paths[0], bytes: readFileSync(join(t.manifests, paths[0])) }], trickle: true });
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(phases()).toEqual(Array(N).fill('Synced'));
  });

  it('removals delivered whole (commits) are counted together within the window', async () => {
    const one = await t.rt.reconciler.apply({ type: 'delta', files: [], removed: paths.slice(0, 3) });
    expect(one.pruned).toHaveLength(3);
    const two = await t.rt.reconciler.apply({ type: 'delta', files: [], removed: paths.slice(3, 5) });
    expect(two.pruned).toEqual([]);
    expect(two.pruneBlocked).toMatchObject({ keys: ['CoreModel/c4', 'CoreModel/c5'], live: N });
    expect(t.rt.reconciler.status.get('CoreModel/c4')?.message).toBe(
      'mass prune refused: 5 of 8 objects would be removed; confirm with bictl sync --allow-mass-prune',
    );
  });
});
