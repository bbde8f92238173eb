import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { pipelineApplier } from '../../../../controller/kinds/pipeline/applier.ts';
import { readPipeline } from '../../../../controller/runs/pipeline-view.ts';
import type { PipelineSpec } from '../../../../controller/kinds/pipeline/types.ts';
import { IdAllocator } from '../../../../controller/store/ids.ts';
import type { Manifest } from '../../../../controller/types.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';
import { fullPayload, minimalPayload } from './fixtures.ts';

const START_MS = Date.parse('2026-03-01T10:00:00.000Z');

describe('Pipeline applier', () => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await makeTestRuntime();
  });
  afterEach(async () => t.close());

  const status = (name: string) => t.rt.reconciler.status.get(`Pipeline/${name}`);
  const view = (id: string) => readPipeline(t.rt.db, id, t.clock.now());
  const count = (table: string) => (t.rt.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

  it('creates a draft pipeline DP-<ms> with the generated source step first and every step configured', async () => {
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', fullPayload()));
    await t.sync();
    const s = status('orders');
    expect(s?.phase).toBe('Synced');
    const id = `DP-${START_MS}`;
    const stepIds = Array.from({ length: 9 }, (_, i) => `step-${START_MS}-${i}`);
    expect(s?.resourceIds).toEqual({ pipelineId: id, stepIds });
    const v = view(id);
    expect(v).toEqual({
      pipelineId: id,
      name: 'Orders nightly',
      description: 'Orders into reporting',
      category: 'sales',
      tags: ['orders'],
      status: 'draft',
      source: { connectionId: 'D2026A00001', type: 'api', config: { endpoint: 'https://shop.example.com/orders', paginated: true, method: 'GET' } },
      destination: { connectionId: 'D2026A00002', schemaName: 'reporting', type: 'database', vendor: 'POSTGRESQL' },
      schedule: { isEnabled: true, frequency: 'daily', startDate: '2026-01-01', startTime: '02:00' },
      nextRunAt: '2026-03-02T02:00:00.000Z',
      lastRun: null,
      steps: expect.any(Array),
      createdBy: 'controller',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
    });
    expect(v?.steps.map((x) => [x.id, x.type, x.name, x.status])).toEqual([
      [stepIds[0], 'source', 'Source', 'configured'],
      [stepIds[1], 'source', 'Source', 'configured'],
      [stepIds[2], 'transform', 'Transform', 'configured'],
      [stepIds[3], 'validate', 'Validate', 'configured'],
      [stepIds[4], 'quality', 'Data Quality', 'configured'],
      [stepIds[5], 'db_lookup', 'Customer lookup', 'configured'],
      [stepIds[6], 'stage', 'Stage', 'configured'],
      [stepIds[7], 'load', 'Load', 'configured'],
      [stepIds[8], 'reconcile', 'Reconcile', 'configured'],
    ]);
    expect(v?.steps[7].config).toEqual({ connectionId: 'D2026A00002', schemaName: 'reporting', tableName: 'orders' });
  });

  it('gives every pipeline of a burst in one frozen millisecond its own ID, also across a restart', async () => {
    for (let i = 0; i < 40; i++) t.write(`pipelines/p${i}.yaml`, manifest('Pipeline', `p${i}`, minimalPayload(`P ${i}`)));
    const report = await t.sync();
    expect(report.applied).toHaveLength(40);
    const first = (t.rt.db.prepare('SELECT pipeline_id FROM pipelines').all() as { pipeline_id: string }[]).map((r) => r.pipeline_id);
    expect(new Set(first).size).toBe(40);
    for (const id of first) expect(id).toMatch(/^DP-\d{13}$/);
    const stamps = first.map((id) => Number(id.slice(3))).sort((a, b) => a - b);
    expect(stamps[0]).toBe(START_MS);
    expect(stamps[39]).toBe(START_MS + 39);

    // A restart with a clock showing the very same millisecond again (FakeClock starts over).
    t = await t.restart();
    for (let i = 40; i < 50; i++) t.write(`pipelines/p${i}.yaml`, manifest('Pipeline', `p${i}`, minimalPayload(`P ${i}`)));
    await t.sync();
    const all = (t.rt.db.prepare('SELECT pipeline_id FROM pipelines').all() as { pipeline_id: string }[]).map((r) => r.pipeline_id);
    expect(all).toHaveLength(50);
    expect(new Set(all).size).toBe(50);
    const later = all.filter((id) => !first.includes(id)).map((id) => Number(id.slice(3)));
    expect(Math.min(...later)).toBe(START_MS + 40);
    const steps = (t.rt.db.prepare('SELECT step_id FROM pipeline_steps').all() as { step_id: string }[]).map((r) => r.step_id);
    expect(steps).toHaveLength(100);
    expect(new Set(steps).size).toBe(100);
    for (const id of steps) expect(id).toMatch(/^step-\d+-[01]$/);
  });

  it('updates in place: the pipeline ID and the IDs of unchanged steps stay, changed steps are rewritten or renewed', async () => {
    const body = fullPayload() as PipelineSpec & Record<string, unknown>;
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', body));
    await t.sync();
    const id = `DP-${START_MS}`;
    const before = view(id);
    t.clock.advance(60_000);
    const edited = structuredClone(body);
    edited.description = 'edited';
    edited.steps[6] = { type: 'load', config: { tableName: 'orders_v2' } }; // same type at index 7: kept, config updated
    edited.steps[5] = { type: 'validate', config: { rules: [] } }; // type changed at index 6: a new step
    edited.steps.push({ type: 'quality', name: 'Final check', config: {} }); // appended
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', edited));
    await t.sync();
    expect(status('orders')?.phase).toBe('Synced');
    const after = view(id);
    const fresh = START_MS + 60_000;
    expect(after?.pipelineId).toBe(id);
    expect(after?.description).toBe('edited');
    expect(after?.createdAt).toBe('2026-03-01T10:00:00.000Z');
    expect(after?.updatedAt).toBe('2026-03-01T10:01:00.000Z');
    expect(after?.steps.map((s) => s.id)).toEqual([
      ...(before?.steps.slice(0, 6).map((s) => s.id) ?? []),
      `step-${fresh}-6`,
      `step-${START_MS}-7`,
      `step-${START_MS}-8`,
      `step-${fresh}-9`,
    ]);
    expect(after?.steps[6]).toEqual({ id: `step-${fresh}-6`, type: 'validate', name: 'Validate', status: 'configured', config: { rules: [] } });
    expect(after?.steps[7].config).toEqual({ connectionId: 'D2026A00002', schemaName: 'reporting', tableName: 'orders_v2' });
    expect(after?.steps[9]).toEqual({ id: `step-${fresh}-9`, type: 'quality', name: 'Final check', status: 'configured', config: {} });
    expect(count('pipelines')).toBe(1);
    expect(count('pipeline_steps')).toBe(10);

    // Fewer steps: the surplus goes.
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', { ...edited, steps: edited.steps.slice(0, 2) }));
    await t.sync();
    expect(view(id)?.steps.map((s) => s.id)).toEqual(before?.steps.slice(0, 3).map((s) => s.id));
  });

  it('a failed update keeps the last good state, and the next good version updates the same pipeline', async () => {
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', minimalPayload('Orders')));
    await t.sync();
    const id = `DP-${START_MS}`;
    const good = view(id);
    const broken = { ...minimalPayload('Orders'), schedule: { frequency: 'cron', cronExpression: '0 25 * * *' } };
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', broken));
    await t.sync();
    expect(status('orders')?.phase).toBe('Failed');
    expect(view(id)).toEqual(good);
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', { ...minimalPayload('Orders v2') }));
    await t.sync();
    expect(status('orders')?.phase).toBe('Synced');
    expect(view(id)?.name).toBe('Orders v2');
    expect(view(id)?.steps.map((s) => s.id)).toEqual(good?.steps.map((s) => s.id));
    expect(count('pipelines')).toBe(1);
  });

  it('re-applying the same manifest writes nothing', async () => {
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', fullPayload()));
    await t.sync();
    const s = status('orders');
    const doc = parse(readFileSync(join(t.manifests, 'pipelines/orders.yaml'), 'utf8')) as Manifest<PipelineSpec>;
    t.rt.schemas.validate('pipeline', doc.spec);
    const changes = () => (t.rt.db.prepare('SELECT total_changes() AS n').get() as { n: number }).n;
    const n0 = changes();
    t.clock.advance(5_000);
    const refs = t.rt.db.transaction(() =>
      pipelineApplier.apply({
        db: t.rt.db,
        ids: new IdAllocator({ db: t.rt.db, clock: t.clock.now }),
        now: t.clock.now(),
        key: 'Pipeline/orders',
        manifest: doc,
        previous: s?.resourceIds,
        actor: 'someone-else',
        step: () => {},
      }),
    )();
    expect(refs).toEqual(s?.resourceIds);
    expect(changes()).toBe(n0);
    expect(view(`DP-${START_MS}`)?.updatedAt).toBe('2026-03-01T10:00:00.000Z');
  });

  it('prunes the pipeline and its steps when the manifest is removed', async () => {
    t.write('pipelines/orders.yaml', manifest('Pipeline', 'orders', fullPayload()));
    t.write('pipelines/other.yaml', manifest('Pipeline', 'other', minimalPayload()));
    t.write('pipelines/third.yaml', manifest('Pipeline', 'third', minimalPayload()));
    await t.sync();
    expect(count('pipeline_steps')).toBe(13);
    t.remove('pipelines/orders.yaml');
    const report = await t.sync();
    expect(report.pruned).toEqual(['Pipeline/orders']);
    expect(status('orders')?.phase).toBe('Pruned');
    expect(view(`DP-${START_MS}`)).toBeUndefined();
    expect(count('pipelines')).toBe(2);
    expect(count('pipeline_steps')).toBe(4);
  });

  it('a git manifest whose regex or cron does not compile fails at step validate and writes nothing', async () => {
    const body = { ...minimalPayload(), steps: [{ type: 'validate', config: { rules: [{ field: 'a', rule: 'regex', params: { pattern: '(' } }] } }] };
    t.write('pipelines/bad.yaml', manifest('Pipeline', 'bad', { ...body, schedule: { frequency: 'cron', cronExpression: '99 * * * *' } }));
    const report = await t.sync();
    expect(report.failed).toEqual(['Pipeline/bad']);
    expect(status('bad')?.message).toBe(
      'validate: spec.steps[0].config.rules[0].params.pattern is not a valid regular expression: Invalid regular expression: /(/: Unterminated group; ' +
        'spec.schedule.cronExpression is not a valid cron expression: Constraint error, got value 99 expected range 0-59',
    );
    expect(count('pipelines')).toBe(0);
  });

  it('a manifest whose schedule fires more often than BI_SCHEDULE_MIN_INTERVAL is refused at step validate naming the field, and writes nothing', async () => {
    const schedule = { isEnabled: true, frequency: 'cron', cronExpression: '*/30 * * * * *' };
    t.write('pipelines/eager.yaml', manifest('Pipeline', 'eager', { ...minimalPayload(), schedule }));
    const report = await t.sync();
    expect(report.failed).toEqual(['Pipeline/eager']);
    expect(status('eager')).toMatchObject({
      phase: 'Failed',
      reason: 'validate',
      message: 'validate: spec.schedule.cronExpression fires every 30s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)',
    });
    expect(count('pipelines')).toBe(0);
  });

  it('a manifest that breaks the schema is Invalid with the path of each problem', async () => {
    t.write('pipelines/bad.yaml', manifest('Pipeline', 'bad', { ...minimalPayload(), destination: { connectionId: 'D', type: 's3' } }));
    await t.sync();
    const s = t.rt.reconciler.status.get('File/pipelines/bad.yaml');
    expect(s?.phase).toBe('Invalid');
    expect(s?.message).toBe('spec.destination.type must be database (the only destination type in this version)');
  });

  it('applies the example manifest manifests/pipelines/daily-orders.yaml (Synced)', async () => {
    const example = readFileSync(join(import.meta.dirname, '../../../../manifests/pipelines/daily-orders.yaml'), 'utf8');
    t.write('pipelines/daily-orders.yaml', example);
    await t.sync();
    expect(status('daily-orders')?.phase).toBe('Synced');
    const v = view(`DP-${START_MS}`);
    expect(v?.steps.map((s) => `${s.type}:${s.name}`)).toEqual(['source:Source', 'transform:Transform', 'validate:Validate', 'load:Load']);
    expect(v?.nextRunAt).toBe('2026-03-02T02:00:00.000Z');
  });
});
