import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { loginAs, type TestSession } from '../../helpers/auth.ts';
import { FakeEngine } from '../../helpers/fake-engine.ts';
import { makeTestApp, type TestApp } from '../../helpers/runtime.ts';
import { minimalPayload } from '../../controller/kinds/pipeline/fixtures.ts';
import { csvField } from '../../../api/routes/run-exports.ts';

let t: TestApp;
let admin: TestSession;
let member: TestSession;
beforeEach(async () => {
  t = await makeTestApp({ engine: new FakeEngine({ rows: 8, rejectsPerStep: 3 }) });
  admin = await loginAs(t, { role: 'admin' });
  member = await loginAs(t, { role: 'member' });
});
afterEach(async () => t.close());

async function importPipeline(payload: Record<string, unknown> = minimalPayload('Orders')): Promise<{ pipelineId: string; path: string }> {
  const res = await t.app.inject({ method: 'POST', url: `/v1/sdk/import-pipeline/${admin.userId}`, headers: admin.headers, payload });
  expect(res.statusCode).toBe(201);
  const pipelineId = res.json().data.pipelineId as string;
  const key = (t.rt.db.prepare('SELECT manifest_key FROM pipelines WHERE pipeline_id = ?').get(pipelineId) as { manifest_key: string }).manifest_key;
  return { pipelineId, path: t.rt.reconciler.status.get(key)?.path as string };
}
const schedule = (pipelineId: string, payload: unknown, who = admin) =>
  t.app.inject({ method: 'PATCH', url: `/v1/bi/admin/pipelines/${pipelineId}/schedule/${who.userId}`, headers: who.headers, payload: payload as object });
const specOf = (path: string) => (parse(readFileSync(join(t.manifests, path), 'utf8')) as { spec: Record<string, unknown> & { schedule?: Record<string, unknown> } }).spec;

describe('pipeline schedule from the console', () => {
  it('PATCH …/schedule sets a cron schedule (nextRunAt), pauses it (no nextRunAt, manual runs still start) and resumes it', async () => {
    const { pipelineId, path } = await importPipeline();
    const set = await schedule(pipelineId, { isEnabled: true, frequency: 'cron', cronExpression: '0 6 * * *' });
    expect(set.statusCode).toBe(200);
    expect(set.json().data).toMatchObject({ pipelineId, schedule: { isEnabled: true, frequency: 'cron', cronExpression: '0 6 * * *' } });
    expect(set.json().data.nextRunAt).toMatch(/T06:00:00/);
    expect(specOf(path).schedule).toEqual({ isEnabled: true, frequency: 'cron', cronExpression: '0 6 * * *' });
    // The rest of the file stays as written: no defaults filled in.
    expect(specOf(path)).toEqual({ ...minimalPayload('Orders'), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '0 6 * * *' } });

    const paused = await schedule(pipelineId, { isEnabled: false });
    expect(paused.json().data).toMatchObject({ schedule: { isEnabled: false, cronExpression: '0 6 * * *' }, nextRunAt: null });
    const run = await t.app.inject({ method: 'POST', url: `/v1/sdk/pipelines/${pipelineId}/runs/${admin.userId}`, headers: admin.headers });
    expect(run.statusCode).toBe(202);
    await t.rt.runs.dispatcher.wait(run.json().run.runId);

    const resumed = await schedule(pipelineId, { isEnabled: true });
    expect(resumed.json().data.nextRunAt).toMatch(/T06:00:00/);
    const audit = (await t.app.inject({ url: `/v1/reconciler/objects/Pipeline/${path.replace(/^pipelines\/|\.yaml$/g, '')}/history`, headers: admin.headers })).json().history;
    expect(audit.versions).toHaveLength(4);
  });

  it('a cron more frequent than BI_SCHEDULE_MIN_INTERVAL is a 400 naming schedule.cronExpression; nothing is written', async () => {
    const { pipelineId, path } = await importPipeline();
    const before = readFileSync(join(t.manifests, path), 'utf8');
    const res = await schedule(pipelineId, { isEnabled: true, frequency: 'cron', cronExpression: '*/10 * * * * *' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatch(/schedule\.cronExpression/);
    expect(res.json().error).toMatch(/BI_SCHEDULE_MIN_INTERVAL/);
    expect(readFileSync(join(t.manifests, path), 'utf8')).toBe(before);
    const bad = await schedule(pipelineId, { colour: 'red' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatch(/^schedule\.colour /);
    expect((await schedule(pipelineId, {})).json().error).toMatch(/^schedule needs at least one/);
    expect((await schedule(pipelineId, { cronExpression: 'not cron', frequency: 'cron' })).json().error).toMatch(/schedule\.cronExpression/);
  });

  it('unknown pipeline 404; members 403', async () => {
    expect((await schedule('DP-1', { isEnabled: false })).json()).toEqual({ success: false, error: 'Pipeline DP-1 not found' });
    const { pipelineId } = await importPipeline();
    expect((await schedule(pipelineId, { isEnabled: false }, member)).statusCode).toBe(403);
  });
});

describe('run logs and rejects: filters and downloads', () => {
  async function finishedRun(): Promise<{ runId: string; steps: { stepId: string; name: string }[] }> {
    const { pipelineId } = await importPipeline({ ...minimalPayload('Orders'), steps: [{ type: 'load', config: { tableName: 't' } }] });
    const res = await t.app.inject({ method: 'POST', url: `/v1/sdk/pipelines/${pipelineId}/runs/${admin.userId}`, headers: admin.headers });
    const runId = res.json().run.runId as string;
    await t.rt.runs.dispatcher.wait(runId);
    const run = (await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/${admin.userId}`, headers: admin.headers })).json().run;
    return { runId, steps: run.steps };
  }

  it('rejects filter by step and reason; logs by level and step (400 naming a bad filter)', async () => {
    const { runId, steps } = await finishedRun();
    const load = steps.find((s) => s.name === 'Load') as { stepId: string };
    const get = (url: string) => t.app.inject({ url, headers: admin.headers });
    expect((await get(`/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}`)).json().rejects).toHaveLength(3);
    expect((await get(`/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}?step=${load.stepId}&reason=ROW%201`)).json().rejects).toEqual([
      { step: load.stepId, row: { id: 1, step: 1 }, reasons: ['row 1 refused by Load'] },
    ]);
    expect((await get(`/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}?step=nope`)).json().rejects).toEqual([]);
    expect((await get(`/v1/sdk/pipeline-runs/${runId}/rejects/${admin.userId}?reason=%25`)).json().rejects).toEqual([]);
    const logs = (await get(`/v1/sdk/pipeline-runs/${runId}/logs/${admin.userId}?step=Load`)).json().logs as { message: string }[];
    expect(logs.map((l) => l.message)).toEqual(['Load: 5 rows']);
    expect((await get(`/v1/sdk/pipeline-runs/${runId}/logs/${admin.userId}?level=error`)).json().logs).toEqual([]);
    const bad = await get(`/v1/sdk/pipeline-runs/${runId}/logs/${admin.userId}?level=loud`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toMatch(/^level must be one of info, warn, error/);
  });

  it('downloads: CSV with the rows’ fields as columns and NDJSON, filtered, every kept row; 404 for a run the caller cannot see', async () => {
    const { runId, steps } = await finishedRun();
    const load = steps.find((s) => s.name === 'Load') as { stepId: string };
    const csv = await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/export/rejects/${admin.userId}`, headers: admin.headers });
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(csv.headers['content-disposition']).toBe(`attachment; filename="${runId}-rejects.csv"`);
    expect(csv.body.split('\r\n').filter(Boolean)).toEqual(['step,reasons,id,step', `${load.stepId},row 0 refused by Load,0,1`, `${load.stepId},row 1 refused by Load,1,1`, `${load.stepId},row 2 refused by Load,2,1`]);
    const nd = await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/export/rejects/${admin.userId}?format=ndjson&reason=row%202`, headers: admin.headers });
    expect(nd.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    expect(nd.body.trim().split('\n').map((l) => JSON.parse(l))).toEqual([{ step: load.stepId, row: { id: 2, step: 1 }, reasons: ['row 2 refused by Load'] }]);
    const logs = await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/export/logs/${admin.userId}?format=csv&level=info`, headers: admin.headers });
    expect(logs.body.split('\r\n')[0]).toBe('at,level,message');
    expect(logs.body).toContain(',info,Load: 5 rows');
    const badFormat = await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/export/logs/${admin.userId}?format=xlsx`, headers: admin.headers });
    expect(badFormat.statusCode).toBe(400);
    expect(badFormat.json().error).toBe('format must be one of csv, ndjson');
    const hidden = await t.app.inject({ url: `/v1/sdk/pipeline-runs/${runId}/export/logs/${member.userId}`, headers: member.headers });
    expect(hidden.statusCode).toBe(404);
  });

  it('CSV fields are quoted when needed and never start a formula', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('=HYPERLINK("x")')).toBe(`"'=HYPERLINK(""x"")"`);
    expect(csvField('-1+1')).toBe("'-1+1");
    expect(csvField(-1)).toBe('-1');
    expect(csvField({ a: 1 })).toBe('"{""a"":1}"');
    expect(csvField(null)).toBe('');
  });
});
