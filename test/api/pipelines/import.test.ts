import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { StepError } from '../../../controller/errors.ts';
import { defaultAppliers } from '../../../controller/kinds/index.ts';
import { createUserWithKey, loginAs, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';
import { fullPayload, minimalPayload } from '../../controller/kinds/pipeline/fixtures.ts';

const START_MS = Date.parse('2026-03-01T10:00:00.000Z');
const URL = '/v1/sdk/import-pipeline';

describe('POST /v1/sdk/import-pipeline', () => {
  let t: TestApp;
  let key: TestKey;
  async function setup(opts: Parameters<typeof makeTestApp>[0] = {}) {
    t = await makeTestApp(opts);
    key = await createUserWithKey(t);
  }
  afterEach(async () => t.close());

  const post = (payload: unknown, url = URL, headers = key.headers) => t.app.inject({ method: 'POST', url, headers, payload: payload as object });
  const pipelineFiles = () => (existsSync(join(t.manifests, 'pipelines')) ? readdirSync(join(t.manifests, 'pipelines')).sort() : []);
  const count = (table: string) => (t.rt.db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

  it('imports a pipeline: 201 with the generated source step first, every step configured (docs/contract/api.md §4.4)', async () => {
    await setup();
    const res = await post(fullPayload());
    expect(res.statusCode).toBe(201);
    const id = `DP-${START_MS}`;
    const step = (i: number, type: string, name: string) => ({ id: `step-${START_MS}-${i}`, type, name, status: 'configured' });
    expect(res.json()).toEqual({
      success: true,
      message: 'Pipeline imported successfully',
      data: {
        pipelineId: id,
        name: 'Orders nightly',
        status: 'draft',
        steps: [
          step(0, 'source', 'Source'),
          step(1, 'source', 'Source'),
          step(2, 'transform', 'Transform'),
          step(3, 'validate', 'Validate'),
          step(4, 'quality', 'Data Quality'),
          step(5, 'db_lookup', 'Customer lookup'),
          step(6, 'stage', 'Stage'),
          step(7, 'load', 'Load'),
          step(8, 'reconcile', 'Reconcile'),
        ],
      },
    });
    // The manifest on disk: the payload as sent, the caller recorded; the store records the caller too.
    expect(pipelineFiles()).toEqual(['Orders-nightly.yaml']);
    const doc = parse(readFileSync(join(t.manifests, 'pipelines/Orders-nightly.yaml'), 'utf8'));
    expect(doc).toEqual({
      apiVersion: 'bi.controller/v1',
      kind: 'Pipeline',
      metadata: { name: 'Orders-nightly', annotations: { 'bi.controller/requested-by': key.userId } },
      spec: fullPayload(),
    });
    const row = t.rt.db.prepare('SELECT created_by, manifest_key FROM pipelines WHERE pipeline_id = ?').get(id);
    expect(row).toEqual({ created_by: key.userId, manifest_key: 'Pipeline/Orders-nightly' });
    expect(t.rt.reconciler.status.get('Pipeline/Orders-nightly')?.phase).toBe('Synced');
  });

  it('each call creates a new pipeline: a taken name gets -2, -3, also when imported at once', async () => {
    await setup();
    const a = await post(minimalPayload('Daily load'));
    const b = await post(minimalPayload('Daily load'));
    expect([a.statusCode, b.statusCode]).toEqual([201, 201]);
    expect(b.json().data.pipelineId).toBe(`DP-${START_MS + 1}`);
    const burst = await Promise.all(Array.from({ length: 6 }, () => post(minimalPayload('Daily load'))));
    expect(burst.map((r) => r.statusCode)).toEqual(Array(6).fill(201));
    const ids = [a, b, ...burst].map((r) => r.json().data.pipelineId as string);
    expect(new Set(ids).size).toBe(8);
    expect(pipelineFiles()).toEqual(['Daily-load-2.yaml', 'Daily-load-3.yaml', 'Daily-load-4.yaml', 'Daily-load-5.yaml', 'Daily-load-6.yaml', 'Daily-load-7.yaml', 'Daily-load-8.yaml', 'Daily-load.yaml']);
    expect(count('pipelines')).toBe(8);
  });

  it('does not take the name of a manifest defined elsewhere in the folder; odd names become safe file names', async () => {
    await setup();
    t.write('teams/sales.yaml', manifest('Pipeline', 'Nightly', minimalPayload('Owned by git')));
    await t.sync();
    const res = await post(minimalPayload('Nightly'));
    expect(res.statusCode).toBe(201);
    expect(pipelineFiles()).toEqual(['Nightly-2.yaml']);
    expect((await post(minimalPayload('../../etc/passwd'))).statusCode).toBe(201);
    expect((await post(minimalPayload('日本語'))).statusCode).toBe(201);
    expect(pipelineFiles()).toEqual(['Nightly-2.yaml', 'etc-passwd.yaml', 'pipeline.yaml']);
    expect((await post(minimalPayload('日本語'))).json().data.name).toBe('日本語');
  });

  it('answers a payload without a name with exactly the spec message', async () => {
    await setup();
    const { name: _n, ...noName } = minimalPayload();
    const res = await post(noName);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'Pipeline JSON must include a name.', code: 'validation', problems: expect.any(Array) });
    expect(pipelineFiles()).toEqual([]);
  });

  it('answers 400 listing every problem with its path, and writes nothing', async () => {
    await setup();
    const res = await post({
      source: { type: 'ftp' },
      destination: { connectionId: 'D2026A00002', type: 'warehouse' },
      steps: [{ type: 'load', config: {} }, { type: 'validate', config: { rules: [{ field: 'a', rule: 'regex', params: { pattern: '[' } }] } }],
      schedule: { isEnabled: true, frequency: 'cron', cronExpression: '* * *', startTime: '25:00' },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      message:
        'Pipeline JSON must include a name.; source.connectionId is required; source.type must be one of api, database, file, s3; ' +
        'destination.type must be database (the only destination type in this version); steps[0].config.tableName is required; ' +
        'schedule.startTime must be a time HH:MM (00:00 to 23:59); ' +
        'steps[1].config.rules[0].params.pattern is not a valid regular expression: Invalid regular expression: /[/: Unterminated character class; ' +
        'schedule.cronExpression is not a valid cron expression: must have 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds, got 3',
      code: 'validation',
      problems: expect.any(Array),
    });
    expect(pipelineFiles()).toEqual([]);
    expect(count('pipelines')).toBe(0);
  });

  it('answers 400 naming schedule.cronExpression for a schedule firing more often than BI_SCHEDULE_MIN_INTERVAL, and writes nothing', async () => {
    await setup();
    const res = await post({ ...minimalPayload(), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '* * * * * *' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'schedule.cronExpression fires every 1s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)', code: 'validation', problems: expect.any(Array) });
    expect(pipelineFiles()).toEqual([]);
    expect((await post({ ...minimalPayload(), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '* * * * *' } })).statusCode).toBe(201);
  });

  it('BI_SCHEDULE_MIN_INTERVAL sets the minimum', async () => {
    await setup({ env: { BI_SCHEDULE_MIN_INTERVAL: '1h' } });
    const res = await post({ ...minimalPayload(), schedule: { isEnabled: true, frequency: 'cron', cronExpression: '*/30 * * * *' } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ success: false, message: 'schedule.cronExpression fires every 30m, more often than once per 1h (BI_SCHEDULE_MIN_INTERVAL)', code: 'validation', problems: expect.any(Array) });
  });

  it('answers malformed JSON and a non-object body with {success:false, message}', async () => {
    await setup();
    const bad = await t.app.inject({ method: 'POST', url: URL, headers: { ...key.headers, 'content-type': 'application/json' }, payload: '{"name":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({ success: false, message: expect.stringMatching(/^Malformed JSON body/), code: 'malformed_json' });
    const arr = await post([1, 2]);
    expect(arr.statusCode).toBe(400);
    expect(arr.json()).toEqual({ success: false, message: 'Pipeline JSON must include a name.; Pipeline JSON must be an object.', code: 'validation', problems: expect.any(Array) });
  });

  it('needs an API key (docs/contract/api.md §7)', async () => {
    await setup();
    const none = await post(minimalPayload(), URL, {});
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ error: 'API key required' });
    const wrong = await post(minimalPayload(), URL, { 'x-api-key': `bictl_sk_${'0'.repeat(64)}` });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'Invalid API key' });
    expect(pipelineFiles()).toEqual([]);
  });

  it('?dryRun=true answers 200 with the plan and writes nothing', async () => {
    await setup();
    const res = await post(fullPayload(), `${URL}?dryRun=true`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect({ ...body, data: { ...body.data, steps: body.data.steps.slice(0, 2) } }).toEqual({
      success: true,
      dryRun: true,
      message: 'Pipeline is valid; nothing was written',
      data: {
        pipelineId: null,
        name: 'Orders nightly',
        status: 'draft',
        steps: [
          { id: null, type: 'source', name: 'Source', status: 'configured', config: { connectionId: 'D2026A00001', endpoint: 'https://shop.example.com/orders', paginated: true, method: 'GET' } },
          { id: null, type: 'source', name: 'Source', status: 'configured', config: { connectionId: 'D2026A00001', endpoint: 'https://shop.example.com/returns', paginated: true, method: 'GET' } },
        ],
        nextRunAt: '2026-03-02T02:00:00.000Z',
      },
    });
    expect(body.data.steps.map((s: { type: string }) => s.type)).toEqual(['source', 'source', 'transform', 'validate', 'quality', 'db_lookup', 'stage', 'load', 'reconcile']);
    expect(pipelineFiles()).toEqual([]);
    expect(count('pipelines')).toBe(0);
    expect(t.rt.db.prepare("SELECT COUNT(*) AS n FROM counters WHERE name = 'pipeline'").get()).toEqual({ n: 0 });
    // A dry run still validates.
    const invalid = await post({ ...minimalPayload(), name: '' }, `${URL}?dryRun=true`);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json()).toEqual({ success: false, message: 'Pipeline JSON must include a name.', code: 'validation', problems: expect.any(Array) });
    // `?dryRun` is a flag (api/validation.ts): bare, `1` or `true` is a dry run; any other value is not, and no 400.
    for (const q of ['?dryRun', '?dryRun=', '?dryRun=1', '?dryRun=true']) expect((await post(fullPayload(), `${URL}${q}`)).json(), q).toMatchObject({ dryRun: true });
    expect(count('pipelines')).toBe(0);
    const yes = await post(fullPayload(), `${URL}?dryRun=yes`);
    expect([yes.statusCode, yes.json().dryRun]).toEqual([201, undefined]);
    expect((await post({ ...fullPayload(), name: 'Other' }, `${URL}?dryRun=false&dryRun=true`)).statusCode).toBe(201);
    expect(count('pipelines')).toBe(2);
  });

  it('a failed apply answers 422 "<step>: <reason>" and withdraws the manifest', async () => {
    const appliers = defaultAppliers().map((a) =>
      a.kind === 'Pipeline'
        ? {
            ...a,
            apply: () => {
              throw new StepError('steps', 'the store refused the steps');
            },
          }
        : a,
    );
    await setup({ appliers });
    // The dry run goes through the same apply (the reconciler's dry run): the same 422, nothing written.
    const dry = await post(minimalPayload('Doomed'), `${URL}?dryRun=true`);
    expect([dry.statusCode, dry.json()]).toEqual([422, { success: false, message: 'steps: the store refused the steps' }]);
    expect(pipelineFiles()).toEqual([]);
    expect(count('pipelines')).toBe(0);
    const res = await post(minimalPayload('Doomed'));
    expect(res.statusCode).toBe(422);
    expect(res.json()).toEqual({ success: false, message: 'steps: the store refused the steps' });
    expect(pipelineFiles()).toEqual([]);
    expect(count('pipelines')).toBe(0);
    expect(t.rt.reconciler.status.get('Pipeline/Doomed')).toBeUndefined();
    // The name is free again.
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(t.rt.reconciler.status.get('Pipeline/Doomed')).toBeUndefined();
  });
});

describe('POST /v1/sdk/import-pipeline/{userId} (session)', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('imports with a session and CTN; refuses a missing CTN and another user\'s path', async () => {
    t = await makeTestApp();
    const s = await loginAs(t);
    const ok = await t.app.inject({ method: 'POST', url: `${URL}/${s.userId}`, headers: s.headers, payload: minimalPayload('From the UI') });
    expect(ok.statusCode).toBe(201);
    expect(ok.json()).toEqual({
      success: true,
      message: 'Pipeline imported successfully',
      data: {
        pipelineId: `DP-${START_MS}`,
        name: 'From the UI',
        status: 'draft',
        steps: [
          { id: `step-${START_MS}-0`, type: 'source', name: 'Source', status: 'configured' },
          { id: `step-${START_MS}-1`, type: 'load', name: 'Load', status: 'configured' },
        ],
      },
    });
    expect(t.rt.db.prepare('SELECT created_by FROM pipelines').get()).toEqual({ created_by: s.userId });
    const noCtn = await t.app.inject({ method: 'POST', url: `${URL}/${s.userId}`, headers: { cookie: s.cookie }, payload: minimalPayload() });
    expect(noCtn.statusCode).toBe(403);
    expect(noCtn.json()).toEqual({ success: false, error: 'Invalid CSRF token' });
    const other = await t.app.inject({ method: 'POST', url: `${URL}/U2026A09999`, headers: s.headers, payload: minimalPayload() });
    expect(other.statusCode).toBe(403);
    const none = await t.app.inject({ method: 'POST', url: `${URL}/${s.userId}`, payload: minimalPayload() });
    expect(none.statusCode).toBe(401);
    expect(none.json()).toEqual({ success: false, error: 'Session required' });
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM pipelines').get()).toEqual({ n: 1 });
  });
});
