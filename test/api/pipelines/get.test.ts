import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createUserWithKey, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';
import { fullPayload, minimalPayload } from '../../controller/kinds/pipeline/fixtures.ts';

const START_MS = Date.parse('2026-03-01T10:00:00.000Z');

describe('GET /v1/sdk/pipelines/{pipelineId}', () => {
  let t: TestApp;
  let key: TestKey;
  beforeEach(async () => {
    t = await makeTestApp();
    key = await createUserWithKey(t);
  });
  afterEach(async () => t.close());

  const get = (id: string, headers = key.headers) => t.app.inject({ method: 'GET', url: `/v1/sdk/pipelines/${id}`, headers });

  it('answers the stored pipeline with resolved steps and the next run of its enabled schedule', async () => {
    const payload = {
      ...minimalPayload('Hourly orders'),
      destination: { connectionId: 'D2026A00002', schemaName: 'reporting' },
      steps: [
        { type: 'stage', config: { tableName: 'orders_stage' } },
        { type: 'reconcile', name: 'Counts', config: { compareRowCounts: false } },
      ],
      schedule: { isEnabled: true, frequency: 'hourly', startTime: '00:45' },
    };
    const created = await t.app.inject({ method: 'POST', url: '/v1/sdk/import-pipeline', headers: key.headers, payload });
    const id = created.json().data.pipelineId as string;
    t.clock.advance(30 * 60_000); // 10:30
    const res = await get(id);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      success: true,
      data: {
        pipelineId: id,
        owner: null,
        name: 'Hourly orders',
        description: '',
        category: null,
        tags: [],
        status: 'draft',
        source: { connectionId: 'D2026A00001', type: 'database' },
        destination: { connectionId: 'D2026A00002', schemaName: 'reporting', type: 'database', vendor: 'POSTGRESQL' },
        schedule: { isEnabled: true, frequency: 'hourly', startTime: '00:45' },
        nextRunAt: '2026-03-01T10:45:00.000Z',
        lastRun: null,
        steps: [
          { id: `step-${START_MS}-0`, type: 'source', name: 'Source', status: 'configured', config: { connectionId: 'D2026A00001' } },
          {
            id: `step-${START_MS}-1`,
            type: 'stage',
            name: 'Stage',
            status: 'configured',
            config: { connectionId: 'D2026A00002', schemaName: 'reporting', tableName: 'orders_stage' },
          },
          {
            id: `step-${START_MS}-2`,
            type: 'reconcile',
            name: 'Counts',
            status: 'configured',
            config: {
              connectionId: 'D2026A00002',
              schemaName: 'reporting',
              compareRowCounts: false,
              mappingSource: 'default',
              checkFieldCompleteness: true,
              screenMapEnabled: true,
            },
          },
        ],
        createdBy: key.userId,
        createdAt: '2026-03-01T10:00:00.000Z',
        updatedAt: '2026-03-01T10:00:00.000Z',
      },
    });
    t.clock.advance(20 * 60_000); // 10:50
    expect((await get(id)).json().data.nextRunAt).toBe('2026-03-01T11:45:00.000Z');
  });

  it('shows nextRunAt null for a disabled schedule and none', async () => {
    t.write('pipelines/a.yaml', manifest('Pipeline', 'a', { ...fullPayload(), schedule: { frequency: 'daily' } }));
    t.write('pipelines/b.yaml', manifest('Pipeline', 'b', minimalPayload()));
    await t.sync();
    const ids = (t.rt.db.prepare('SELECT pipeline_id, manifest_key FROM pipelines ORDER BY manifest_key').all() as { pipeline_id: string }[]).map(
      (r) => r.pipeline_id,
    );
    const a = (await get(ids[0])).json().data;
    expect([a.schedule, a.nextRunAt, a.createdBy]).toEqual([{ frequency: 'daily', isEnabled: false }, null, 'controller']);
    const b = (await get(ids[1])).json().data;
    expect([b.schedule, b.nextRunAt]).toEqual([null, null]);
  });

  it('answers 404 for an unknown pipeline and 401 without a key', async () => {
    const res = await get('DP-1');
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ success: false, message: 'Pipeline DP-1 not found' });
    const none = await get('DP-1', {});
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: 'API key required' });
  });
});
