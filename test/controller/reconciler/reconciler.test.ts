import { afterEach, describe, expect, it } from 'vitest';
import { StepError } from '../../../controller/errors.ts';
import { defaultAppliers } from '../../../controller/kinds/index.ts';
import type { Applier } from '../../../controller/types.ts';
import type { Store } from '../../../controller/store/db.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../helpers/runtime.ts';

const core = (name: string, spec: Record<string, unknown> = {}) => manifest('CoreModel', name, { name: `Model ${name}`, ...spec });

/** Every row of every table but the reconciler's own status table, as text. */
/** Every table but the status rows and the audit log (which records the failure by design: asserted apart). */
function dump(db: Store): string {
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('manifests', 'audit_log') ORDER BY name").all() as { name: string }[]).map(
    (r) => r.name,
  );
  return tables.map((t) => `${t}:${JSON.stringify(db.prepare(`SELECT * FROM "${t}"`).all())}`).join('\n');
}

function fail(message: string): never {
  throw new Error(message);
}

describe('Reconciler', () => {
  let t: TestRuntime;
  afterEach(async () => t?.close());

  it('applies a new manifest and records its status', async () => {
    t = await makeTestRuntime();
    t.write('core/retail.yaml', core('retail'));
    const report = await t.sync();
    expect(report.applied).toEqual(['CoreModel/retail']);
    const s = t.rt.reconciler.status.get('CoreModel/retail');
    expect(s).toMatchObject({
      kind: 'CoreModel',
      name: 'retail',
      path: 'core/retail.yaml',
      phase: 'Synced',
      message: '',
      attempts: 0,
      nextRetryAt: null,
      resourceIds: { modelId: 'SM2026A00001' },
      lastTransitionAt: '2026-03-01T10:00:00.000Z',
    });
    expect(s?.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(t.rt.db.prepare('SELECT model_id, name FROM core_models').all()).toEqual([{ model_id: 'SM2026A00001', name: 'Model retail' }]);
  });

  it('is idempotent: a second sync writes nothing, issues no ID and moves no timestamp', async () => {
    t = await makeTestRuntime();
    t.write('core/retail.yaml', core('retail'));
    t.write('conn.yaml', manifest('Connection', 'wh', { name: 'Warehouse' }));
    await t.sync();
    const before = dump(t.rt.db);
    const statusBefore = t.rt.reconciler.listStatus();
    t.clock.advance(60_000);
    const report = await t.sync();
    expect(report).toMatchObject({ applied: [], skipped: 2, pruned: [], failed: [], invalid: [] });
    expect(dump(t.rt.db)).toBe(before);
    expect(t.rt.reconciler.listStatus()).toEqual(statusBefore);
  });

  it('re-formatting a file re-reads it but applies nothing', async () => {
    t = await makeTestRuntime();
    t.write('core/retail.yaml', core('retail'));
    await t.sync();
    const before = dump(t.rt.db);
    t.clock.advance(1000);
    t.write('core/retail.yaml', `# a comment\n${JSON.stringify(core('retail'))}`);
    await t.sync();
    expect(dump(t.rt.db)).toBe(before);
  });

  it('updates in place on an edit, keeping the ID', async () => {
    t = await makeTestRuntime();
    t.write('core/retail.yaml', core('retail'));
    await t.sync();
    t.clock.advance(1000);
    t.write('core/retail.yaml', core('retail', { description: 'now with a description' }));
    await t.sync();
    expect(t.rt.db.prepare('SELECT model_id, description, created_at, updated_at FROM core_models').all()).toEqual([
      { model_id: 'SM2026A00001', description: 'now with a description', created_at: '2026-03-01T10:00:00.000Z', updated_at: '2026-03-01T10:00:01.000Z' },
    ]);
  });

  it('keeps the last good state when a file turns invalid, and recovers when it is fixed', async () => {
    t = await makeTestRuntime();
    t.write('core/retail.yaml', core('retail'));
    await t.sync();
    const before = dump(t.rt.db);
    t.write('core/retail.yaml', 'apiVersion: bi.controller/v1\nkind: CoreModel\nmetadata: {name: retail}\nspec: {name: 42}\n');
    const report = await t.sync();
    expect(report.invalid).toEqual(['CoreModel/retail']);
    expect(t.rt.reconciler.status.get('CoreModel/retail')).toMatchObject({
      phase: 'Invalid',
      message: 'spec.name must be string',
      resourceIds: { modelId: 'SM2026A00001' },
    });
    expect(dump(t.rt.db)).toBe(before);
    t.write('core/retail.yaml', core('retail'));
    await t.sync();
    expect(t.rt.reconciler.status.get('CoreModel/retail')).toMatchObject({ phase: 'Synced', resourceIds: { modelId: 'SM2026A00001' } });
  });

  it('reports a file that never parsed under its path, and a name that would escape the folder', async () => {
    t = await makeTestRuntime();
    t.write('broken.yaml', 'kind: [\n');
    t.write('evil.yaml', 'apiVersion: bi.controller/v1\nkind: CoreModel\nmetadata: {name: ../x}\nspec: {name: X}\n');
    t.write('ok.yaml', core('ok'));
    const report = await t.sync();
    expect(report.applied).toEqual(['CoreModel/ok']);
    expect(report.invalid.sort()).toEqual(['File/broken.yaml', 'File/evil.yaml']);
    expect(t.rt.reconciler.status.get('File/evil.yaml')?.message).toBe(
      'metadata.name must be 1 to 128 of A-Z a-z 0-9 . _ - (and not . or ..)',
    );
    expect(t.rt.reconciler.status.get('File/broken.yaml')?.message).toMatch(/^YAML syntax error: .* \(line \d+, column \d+\)$/);
  });

  it('refuses a second file defining the same object', async () => {
    t = await makeTestRuntime();
    t.write('a.yaml', core('retail'));
    await t.sync();
    t.write('b.yaml', core('retail', { description: 'other' }));
    const report = await t.sync();
    expect(report.invalid).toEqual(['File/b.yaml']);
    expect(t.rt.reconciler.status.get('File/b.yaml')?.message).toBe('CoreModel/retail is already defined in a.yaml');
    expect(t.rt.reconciler.status.get('CoreModel/retail')?.path).toBe('a.yaml');
  });

  it('prunes an object whose file was removed', async () => {
    t = await makeTestRuntime();
    t.write('a.yaml', core('a'));
    t.write('b.yaml', core('b'));
    t.write('c.yaml', core('c'));
    await t.sync();
    t.remove('b.yaml');
    const report = await t.sync();
    expect(report.pruned).toEqual(['CoreModel/b']);
    expect(t.rt.reconciler.status.get('CoreModel/b')).toMatchObject({ phase: 'Pruned', path: 'b.yaml' });
    expect((t.rt.db.prepare('SELECT name FROM core_models ORDER BY name').all() as { name: string }[]).map((r) => r.name)).toEqual([
      'Model a',
      'Model c',
    ]);
  });

  it('refuses a sync that would prune more than half of the objects until confirmed', async () => {
    t = await makeTestRuntime();
    for (const n of ['a', 'b', 'c', 'd']) t.write(`${n}.yaml`, core(n));
    await t.sync();
    for (const n of ['a', 'b', 'c']) t.remove(`${n}.yaml`);
    const refused = await t.sync();
    expect(refused.pruned).toEqual([]);
    expect(refused.pruneBlocked?.keys.sort()).toEqual(['CoreModel/a', 'CoreModel/b', 'CoreModel/c']);
    expect(t.rt.reconciler.pruneBlocked?.live).toBe(4);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM core_models').get()).toEqual({ n: 4 });
    expect(t.rt.reconciler.status.get('CoreModel/a')?.message).toMatch(/^mass prune refused: 3 of 4 objects/);
    const confirmed = await t.sync({ allowMassPrune: true });
    expect(confirmed.pruned.sort()).toEqual(['CoreModel/a', 'CoreModel/b', 'CoreModel/c']);
    expect(t.rt.reconciler.pruneBlocked).toBeUndefined();
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM core_models').get()).toEqual({ n: 1 });
  });

  it('a refused prune clears once the files are restored: status, reason and pruneBlocked', async () => {
    t = await makeTestRuntime();
    for (const n of ['a', 'b', 'c', 'd']) t.write(`${n}.yaml`, core(n));
    await t.sync();
    for (const n of ['a', 'b', 'c']) t.remove(`${n}.yaml`);
    await t.sync();
    expect(t.rt.reconciler.status.get('CoreModel/a')).toMatchObject({ phase: 'Synced', reason: 'prune-blocked' });
    for (const n of ['a', 'b', 'c']) t.write(`${n}.yaml`, core(n));
    const restored = await t.sync();
    expect(restored.pruneBlocked).toBeUndefined();
    expect(t.rt.reconciler.pruneBlocked).toBeUndefined();
    for (const n of ['a', 'b', 'c']) expect(t.rt.reconciler.status.get(`CoreModel/${n}`)).toMatchObject({ phase: 'Synced', reason: null, message: '' });
  });

  it('a refused prune is recorded in the store: a restart still reports it', async () => {
    t = await makeTestRuntime();
    for (const n of ['a', 'b', 'c', 'd']) t.write(`${n}.yaml`, core(n));
    await t.sync();
    for (const n of ['a', 'b', 'c']) t.remove(`${n}.yaml`);
    await t.sync();
    t = await t.restart();
    expect(t.rt.reconciler.pruneBlocked?.keys).toEqual(['CoreModel/a', 'CoreModel/b', 'CoreModel/c']);
  });

  it('records the failing step as the reason, apart from the message, and clears it on success', async () => {
    t = await makeTestRuntime();
    t.write('broken.yaml', 'kind: [');
    t.write('schema.yaml', { apiVersion: 'bi.controller/v1', kind: 'CoreModel', metadata: { name: 'x' }, spec: {} });
    await t.sync();
    expect(t.rt.reconciler.status.get('File/broken.yaml')).toMatchObject({ phase: 'Invalid', reason: 'parse' });
    expect(t.rt.reconciler.status.get('File/schema.yaml')).toMatchObject({ phase: 'Invalid', reason: 'schema' });
    t.write('schema.yaml', core('x'));
    await t.sync();
    expect(t.rt.reconciler.status.get('CoreModel/x')).toMatchObject({ phase: 'Synced', reason: null });
    expect(t.rt.reconciler.status.get('File/schema.yaml')).toBeUndefined();
  });

  it('applies kinds in dependency order on a full sync and prunes dependents first', async () => {
    const calls: string[] = [];
    const recorder = (kind: string, order: number): Applier => ({
      kind,
      order,
      apply: (ctx) => {
        calls.push(`apply ${ctx.key}`);
        return { ok: true };
      },
      prune: (ctx) => void calls.push(`prune ${ctx.key}`),
    });
    // Pretend CoreModel depends on Connection: its order is later although its files sort first.
    t = await makeTestRuntime({ appliers: [recorder('CoreModel', 1), recorder('Connection', 0)] });
    t.write('1-core.yaml', core('m1'));
    t.write('2-core.yaml', core('m2'));
    t.write('3-conn.yaml', manifest('Connection', 'n', { name: 'N' }));
    await t.sync();
    expect(calls).toEqual(['apply Connection/n', 'apply CoreModel/m1', 'apply CoreModel/m2']);
    calls.length = 0;
    t.remove('1-core.yaml');
    t.remove('3-conn.yaml');
    await t.sync({ allowMassPrune: true });
    expect(calls).toEqual(['prune CoreModel/m1', 'prune Connection/n']);
  });

  it('rolls a failing apply back whole, records Failed and retries with backoff until it succeeds', async () => {
    let fail = true;
    const threeSteps: Applier = {
      kind: 'CoreModel',
      order: 0,
      apply: (ctx) => {
        const at = ctx.now.toISOString();
        ctx.step('one');
        ctx.db.prepare("INSERT INTO core_models (model_id, name, created_at, updated_at) VALUES (?, 'x', ?, ?)").run(ctx.ids.next('semanticModel'), at, at);
        ctx.step('two');
        ctx.db.prepare("INSERT INTO counters (name, value) VALUES ('steps', 2)").run();
        ctx.step('three');
        if (fail) throw new StepError('three', 'the third step failed');
        return { done: true };
      },
      prune: () => {},
    };
    t = await makeTestRuntime({ appliers: [threeSteps, ...defaultAppliers().filter((a) => a.kind !== 'CoreModel')] });
    const before = dump(t.rt.db);
    const steps: string[] = [];
    t.rt.reconciler.on('event', (e: { type: string; step?: string }) => e.type === 'step' && steps.push(e.step ?? ''));
    t.write('m.yaml', core('m'));
    const report = await t.sync();
    expect(report.failed).toEqual(['CoreModel/m']);
    expect(steps).toEqual(['one', 'two', 'three']);
    expect(dump(t.rt.db)).toBe(before);
    // The failed apply leaves one audit entry, result `failed`, and nothing else.
    expect(t.rt.db.prepare('SELECT action, object_kind, object_id, result FROM audit_log').all()).toEqual([{ action: 'apply', object_kind: 'CoreModel', object_id: 'm', result: 'failed' }]);
    expect(t.rt.reconciler.status.get('CoreModel/m')).toMatchObject({
      phase: 'Failed',
      message: 'three: the third step failed',
      attempts: 1,
      nextRetryAt: '2026-03-01T10:00:01.000Z',
    });
    expect(t.scheduler.delays).toEqual([1000]);
    // The retry timer fires: it fails again and backs off further.
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(t.rt.reconciler.status.get('CoreModel/m')).toMatchObject({ phase: 'Failed', attempts: 2 });
    expect(t.scheduler.delays).toEqual([1000, 2000]);
    fail = false;
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(t.rt.reconciler.status.get('CoreModel/m')).toMatchObject({ phase: 'Synced', attempts: 0, nextRetryAt: null, resourceIds: { done: true } });
    expect(t.scheduler.pending).toBe(0);
  });

  it('applies a sync bigger than what is kept parsed, chunk by chunk: a key failing in a chunk rolls back alone', async () => {
    const base = defaultAppliers().find((a) => a.kind === 'CoreModel') as Applier;
    const failing: Applier = {
      ...base,
      apply: (ctx) => {
        const refs = base.apply(ctx);
        if (ctx.manifest.metadata.name === 'm0500') throw new StepError('create model', 'this one fails after its insert');
        return refs;
      },
    };
    t = await makeTestRuntime({ appliers: [failing, ...defaultAppliers().filter((a) => a.kind !== 'CoreModel')] });
    const names = Array.from({ length: 1100 }, (_, i) => `m${String(i).padStart(4, '0')}`);
    for (const n of names) t.write(`core/${n}.yaml`, core(n, { description: `about ${n}` }));
    const report = await t.sync();
    expect(report.failed).toEqual(['CoreModel/m0500']);
    expect(report.applied).toHaveLength(1099);
    const rows = t.rt.db.prepare('SELECT name, description FROM core_models ORDER BY name').all() as { name: string; description: string }[];
    expect(rows).toHaveLength(1099);
    expect(rows.find((r) => r.name === 'Model m0500')).toBeUndefined();
    expect(rows.at(-1)).toEqual({ name: 'Model m1099', description: 'about m1099' });
    expect(t.rt.reconciler.status.get('CoreModel/m0499')).toMatchObject({ phase: 'Synced' });
    expect(t.rt.reconciler.status.get('CoreModel/m0500')).toMatchObject({ phase: 'Failed', reason: 'create model' });
  });

  it('survives a restart on the same store without duplicating or re-applying anything', async () => {
    t = await makeTestRuntime();
    t.write('a.yaml', core('a'));
    t.write('c.yaml', manifest('Connection', 'wh', { name: 'Warehouse' }));
    await t.sync();
    const before = dump(t.rt.db);
    t = await t.restart();
    expect(t.rt.reconciler.ready).toBe(true);
    expect(dump(t.rt.db)).toBe(before);
    expect(t.rt.reconciler.listStatus().map((s) => s.phase)).toEqual(['Synced', 'Synced']);
  });

  it('reconciles one file on demand and answers with its outcome (the API path)', async () => {
    t = await makeTestRuntime();
    t.write('core/x.yaml', core('x'));
    const file = t.rt.source.read('core/x.yaml');
    if (!file) throw new Error('core/x.yaml not readable');
    const outcome = await t.rt.reconciler.reconcileFile(file);
    expect(outcome).toEqual({
      key: 'CoreModel/x',
      kind: 'CoreModel',
      name: 'x',
      phase: 'Synced',
      reason: null,
      message: '',
      resourceIds: { modelId: 'SM2026A00001' },
      retryAfterMs: null,
    });
    t.remove('core/x.yaml');
    const gone = await t.rt.reconciler.reconcileRemoved('core/x.yaml');
    expect(gone).toMatchObject({ key: 'CoreModel/x', phase: 'Pruned', reason: null });
  });

  it('applies the API writes of one turn in one transaction: a key whose store work fails rolls back alone, and nothing is announced before the commit', async () => {
    t = await makeTestRuntime();
    for (const n of ['a', 'bad', 'c']) t.write(`core/${n}.yaml`, core(n));
    const files = ['a', 'bad', 'c'].map((n) => t.rt.source.read(`core/${n}.yaml`) ?? fail(`core/${n}.yaml not readable`));
    // The store refuses the status row of one key only (as a full disk would refuse one write).
    t.rt.db.exec(`CREATE TRIGGER refuse_bad BEFORE INSERT ON manifests WHEN NEW.key = 'CoreModel/bad' AND NEW.phase = 'Synced' BEGIN SELECT RAISE(ABORT, 'disk says no'); END;
                  CREATE TRIGGER refuse_bad_update BEFORE UPDATE ON manifests WHEN NEW.key = 'CoreModel/bad' AND NEW.phase = 'Synced' BEGIN SELECT RAISE(ABORT, 'disk says no'); END;`);
    const seen: { key: string; inTransaction: boolean; models: unknown[] }[] = [];
    t.rt.reconciler.on('event', (e) => {
      if (e.type !== 'phase') return;
      seen.push({ key: e.key, inTransaction: t.rt.db.inTransaction, models: t.rt.db.prepare('SELECT name FROM core_models ORDER BY name').all() });
    });
    const [a, bad, c] = await Promise.all(files.map((f) => t.rt.reconciler.reconcileFile(f)));
    expect(a).toMatchObject({ key: 'CoreModel/a', phase: 'Synced' });
    expect(c).toMatchObject({ key: 'CoreModel/c', phase: 'Synced' });
    expect(bad).toMatchObject({ key: 'CoreModel/bad', phase: 'Failed', reason: 'store' });
    expect(bad.message).toContain('disk says no');
    expect(t.rt.db.prepare('SELECT name FROM core_models ORDER BY name').all()).toEqual([{ name: 'Model a' }, { name: 'Model c' }]);
    // One group: each event went out after the one commit of both good keys, none inside the transaction.
    expect(seen.map((s) => s.key)).toEqual(['CoreModel/a', 'CoreModel/c']);
    for (const s of seen) expect(s).toMatchObject({ inTransaction: false, models: [{ name: 'Model a' }, { name: 'Model c' }] });
  });

  it('plans creates, updates, prunes and invalid files without changing anything', async () => {
    t = await makeTestRuntime();
    t.write('a.yaml', core('a'));
    t.write('b.yaml', core('b'));
    await t.sync();
    const before = dump(t.rt.db);
    t.write('a.yaml', core('a', { description: 'changed' }));
    t.remove('b.yaml');
    t.write('c.yaml', core('c'));
    t.write('d.yaml', 'nope: [');
    const plan = await t.rt.plan();
    expect(plan.map((p) => [p.action, p.key])).toEqual([
      ['update', 'CoreModel/a'],
      ['create', 'CoreModel/c'],
      ['invalid', 'File/d.yaml'],
      ['prune', 'CoreModel/b'],
    ]);
    expect(dump(t.rt.db)).toBe(before);
  });
});
