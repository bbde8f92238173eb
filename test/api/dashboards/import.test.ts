import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StepError } from '../../../controller/errors.ts';
import { defaultAppliers } from '../../../controller/kinds/index.ts';
import { createUserWithKey, loginAs, type TestKey } from '../../helpers/auth.ts';
import { makeTestApp, manifest, type TestApp } from '../../helpers/runtime.ts';

const DB = 'D2026A00001';

const payload = (extra: Record<string, unknown> = {}) => ({
  name: 'Sales dashboard',
  dataSource: { dbId: DB },
  charts: [
    { title: 'Revenue', type: 'kpi', measures: ['revenue'], dimensions: [] },
    { title: 'By region', type: 'column', measures: [{ field: 'revenue', aggregation: 'sum' }], dimensions: ['region'] },
    { title: 'Trend', type: 'CH00014', measures: ['revenue'], dimensions: [{ field: 'day', isDate: true }], drillDown: 'By region' },
  ],
  ...extra,
});

let KEY: Record<string, string> = {};
let USER: TestKey;

async function setup(opts: Parameters<typeof makeTestApp>[0] = {}): Promise<TestApp> {
  const t = await makeTestApp(opts);
  t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: DB, name: 'Warehouse' }));
  await t.sync();
  USER = await createUserWithKey(t);
  KEY = USER.headers;
  return t;
}

const post = (t: TestApp, body: unknown, url = '/v1/sdk/import', headers: Record<string, string> = KEY) =>
  t.app.inject({ method: 'POST', url, headers, payload: body as Record<string, unknown> });

const dashboardFiles = (t: TestApp) => (existsSync(join(t.manifests, 'dashboards')) ? readdirSync(join(t.manifests, 'dashboards')).sort() : []);

describe('GET /v1/sdk/chart-types', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await setup();
  });
  afterEach(async () => t.close());

  it('answers the catalogue of docs/contract/api.md §4.9 without authentication', async () => {
    const res = await t.app.inject({ url: '/v1/sdk/chart-types' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({
      success: true,
      chartTypes: {
        avatar: 'CH00001', 'clustered-bar': 'CH00002', 'clustered-column': 'CH00003', column: 'CH00003', donut: 'CH00005',
        'column-line': 'CH00006', gauge: 'CH00007', 'horizontal-bar': 'CH00011', bar: 'CH00011', 'line-area': 'CH00013',
        area: 'CH00013', line: 'CH00014', map: 'CH00015', 'nested-donut': 'CH00016', numeric: 'CH00018', pie: 'CH00019',
        'polar-area': 'CH00021', radar: 'CH00022', scatter: 'CH00024', 'trend-view': 'CH00026', 'stacked-bar': 'CH00031',
        'stacked-column': 'CH00031', table: 'CH00032', grid: 'CH00032', 'step-line': 'CH00033', sunburst: 'CH00034',
        bubble: 'CH00040', kpi: 'CH00055', 'kpi-card': 'CH00055', waterfall: 'CH00064',
      },
      aggregations: { sum: 'SUM', count: 'COUNT', average: 'AVERAGE', avg: 'AVERAGE', min: 'MIN', max: 'MAX', distinct: 'DISTINCT', 'as-is': 'AS-IS' },
    });
  });
});

describe('POST /v1/sdk/import', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await setup();
  });
  afterEach(async () => t.close());

  it('answers 401 without a key and writes nothing', async () => {
    const res = await post(t, payload(), '/v1/sdk/import', {});
    expect([res.statusCode, res.json()]).toEqual([401, { error: 'API key required' }]);
    expect(dashboardFiles(t)).toEqual([]);
  });

  it('imports a simple-mode dashboard: 201 exactly as docs/contract/api.md §4.2, a manifest file, the caller as author', async () => {
    const res = await post(t, payload());
    expect(res.statusCode).toBe(201);
    expect(res.json()).toEqual({
      success: true,
      facadeId: 'F2026A00001',
      experiments: [
        {
          experimentId: 'E2026A00001',
          section: 'Sales dashboard',
          charts: [
            { chartId: 'chart_1', chartType: 'CH00055', chartTitle: 'Revenue' },
            { chartId: 'chart_2', chartType: 'CH00003', chartTitle: 'By region' },
            { chartId: 'chart_3', chartType: 'CH00014', chartTitle: 'Trend' },
          ],
        },
      ],
    });
    expect(dashboardFiles(t)).toEqual(['Sales-dashboard.yaml']);
    const written = parse(readFileSync(join(t.manifests, 'dashboards/Sales-dashboard.yaml'), 'utf8'));
    expect(written).toEqual({
      apiVersion: 'bi.controller/v1',
      kind: 'Dashboard',
      metadata: { name: 'Sales-dashboard', annotations: { 'bi.controller/requested-by': USER.userId } },
      spec: payload(),
    });
    expect(t.rt.db.prepare('SELECT created_by FROM facades').all()).toEqual([{ created_by: USER.userId }]);
    expect(t.rt.reconciler.status.get('Dashboard/Sales-dashboard')?.phase).toBe('Synced');
  });

  it('imports sections as one experiment each, with the session variant too', async () => {
    const body = {
      name: 'Multi',
      dataSource: { dbId: DB },
      sections: [
        { name: 'Top', topSection: true, charts: [{ title: 'K', type: 'kpi-card', measures: ['a'], dimensions: [] }] },
        { name: 'Empty', charts: [] },
        { name: 'Detail', category: true, charts: [{ title: 'T', type: 'table', measures: [], dimensions: ['a'] }] },
      ],
    };
    const session = await loginAs(t);
    const res = await post(t, body, `/v1/sdk/import/${session.userId}`, session.headers);
    expect([res.statusCode, res.json()]).toEqual([
      201,
      {
        success: true,
        facadeId: 'F2026A00001',
        experiments: [
          { experimentId: 'E2026A00001', section: 'Top', charts: [{ chartId: 'chart_1', chartType: 'CH00055', chartTitle: 'K' }] },
          { experimentId: 'E2026A00002', section: 'Empty', charts: [] },
          { experimentId: 'E2026A00003', section: 'Detail', charts: [{ chartId: 'chart_2', chartType: 'CH00032', chartTitle: 'T' }] },
        ],
      },
    ]);
    expect(t.rt.db.prepare('SELECT created_by FROM facades').all()).toEqual([{ created_by: session.userId }]);
    const noSession = await post(t, body, `/v1/sdk/import/${session.userId}`, {});
    expect([noSession.statusCode, noSession.json()]).toEqual([401, { success: false, error: 'Session required' }]);
    const noCsrf = await post(t, body, `/v1/sdk/import/${session.userId}`, { cookie: session.cookie });
    expect(noCsrf.statusCode).toBe(403);
  });

  it('creates a new dashboard on every call, also when calls run at once', async () => {
    const results = await Promise.all(Array.from({ length: 6 }, () => post(t, payload())));
    expect(results.map((r) => r.statusCode)).toEqual([201, 201, 201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.json().facadeId)).size).toBe(6);
    expect(dashboardFiles(t)).toEqual(['Sales-dashboard-2.yaml', 'Sales-dashboard-3.yaml', 'Sales-dashboard-4.yaml', 'Sales-dashboard-5.yaml', 'Sales-dashboard-6.yaml', 'Sales-dashboard.yaml']);
    expect((t.rt.db.prepare('SELECT COUNT(*) AS n FROM facades').get() as { n: number }).n).toBe(6);
  });

  it('answers the exact text of docs/contract/api.md §7 without charts, for charts: [] and for sections without charts', async () => {
    const text = "Request body must include a non-empty 'charts' array or 'sections' array with charts";
    for (const body of [{ name: 'x', dataSource: { dbId: DB } }, payload({ charts: [] }), { name: 'x', dataSource: { dbId: DB }, sections: [{ name: 'a', charts: [] }] }]) {
      const res = await post(t, body);
      expect([res.statusCode, res.json()]).toEqual([400, { success: false, error: text, code: 'validation', problems: expect.any(Array) }]);
    }
    expect(dashboardFiles(t)).toEqual([]);
  });

  it('lists every problem with its field path in one 400', async () => {
    const res = await post(t, {
      name: '',
      dataSource: {},
      isPublic: 'yes',
      charts: [
        { title: 'a', type: 'donut', measures: ['m'], dimensions: [], grid: { width: 0 } },
        { title: 'b', type: 'sparkline', measures: [{ field: 'm', aggregation: 'median' }], dimensions: [], grid: { width: 13 }, card: { color: '#GGG' } },
      ],
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      success: false,
      error: [
        'name must NOT have fewer than 1 characters',
        'dataSource.dbId is required',
        'charts[0].grid.width must be >= 1',
        'charts[1].measures[0].aggregation must be one of sum, count, average, avg, min, max, distinct, as-is',
        'charts[1].grid.width must be <= 12',
        'charts[1].card.color must be a hex colour such as #1A73E8',
        'isPublic must be boolean',
        'charts[1].type "sparkline" is not a chart type: use a name or CH code of GET /v1/sdk/chart-types',
      ].join('; '),
      code: 'validation',
      problems: expect.any(Array),
    });
  });

  it('answers 400 for a body that is not an object', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/sdk/import', headers: { ...KEY, 'content-type': 'application/json' }, payload: '[1]' });
    expect([res.statusCode, res.json()]).toEqual([400, { success: false, error: 'Request body must be a JSON object', code: 'validation', problems: expect.any(Array) }]);
  });

  it('checks dataSource.dbId, vdmId and the fields of the VDM against the store', async () => {
    const unknownDb = await post(t, payload({ dataSource: { dbId: 'D2026A00042' } }));
    expect([unknownDb.statusCode, unknownDb.json()]).toEqual([400, { success: false, error: 'dataSource.dbId D2026A00042 is not an existing connection', code: 'validation', problems: expect.any(Array) }]);
    const unknownVdm = await post(t, payload({ dataSource: { dbId: DB, vdmId: 'V2026A00001' } }));
    expect([unknownVdm.statusCode, unknownVdm.json()]).toEqual([400, { success: false, error: 'dataSource.vdmId V2026A00001 is not an existing VDM', code: 'validation', problems: expect.any(Array) }]);
    const at = '2026-01-01T00:00:00.000Z';
    t.rt.db.prepare("INSERT INTO core_models (model_id, name, created_at, updated_at) VALUES ('SM2026A00001', 'core', ?, ?)").run(at, at);
    t.rt.db.prepare("INSERT INTO semantic_models (model_id, client_id, core_model_id, name, created_at, updated_at) VALUES ('SM2026A00002', 'ACME', 'SM2026A00001', 'a', ?, ?)").run(at, at);
    const config = { selectedColumns: ['revenue', { name: 'region' }], measureConfiguration: [{ label: 'Margin' }] };
    t.rt.db
      .prepare("INSERT INTO vdms (vdm_id, model_id, client_id, connection_id, name, position, config, created_at, updated_at) VALUES ('V2026A00001', 'SM2026A00002', 'ACME', ?, 'v', 0, ?, ?, ?)")
      .run(DB, JSON.stringify(config), at, at);
    const badField = await post(t, payload({ dataSource: { dbId: DB, vdmId: 'V2026A00001' } }));
    expect([badField.statusCode, badField.json()]).toEqual([
      400,
      { success: false, error: 'charts[2].dimensions[0].field "day" is not a column of the VDM', code: 'validation', problems: expect.any(Array) },
    ]);
    const ok = await post(t, {
      name: 'ok',
      dataSource: { dbId: DB, vdmId: 'V2026A00001' },
      charts: [{ type: 'column', measures: ['revenue', { field: 'Margin', aggregation: 'as-is' }], dimensions: ['region'] }],
    });
    expect(ok.statusCode).toBe(201);
    expect(t.rt.db.prepare('SELECT vdm_id, connection_id FROM facades').all()).toEqual([{ vdm_id: 'V2026A00001', connection_id: DB }]);
  });

  it('a tenant-scoped key uses only its client\'s connections: any other answers like an unknown one', async () => {
    const scoped = (await createUserWithKey(t, { clientId: 'ACME' })).headers;
    const res = await post(t, payload(), '/v1/sdk/import', scoped);
    expect([res.statusCode, res.json()]).toEqual([400, { success: false, error: `dataSource.dbId ${DB} is not an existing connection`, code: 'validation', problems: expect.any(Array) }]);
    const unknown = await post(t, payload({ dataSource: { dbId: 'D2026A09999' } }), '/v1/sdk/import', scoped);
    expect([unknown.statusCode, unknown.json()]).toEqual([400, { success: false, error: 'dataSource.dbId D2026A09999 is not an existing connection', code: 'validation', problems: expect.any(Array) }]);
    t.rt.db.prepare("UPDATE connections SET owner_client_id = 'ACME' WHERE connection_id = ?").run(DB);
    const ok = await post(t, payload(), '/v1/sdk/import', scoped);
    expect(ok.statusCode).toBe(201);
    const other = await createUserWithKey(t, { clientId: 'OTHER' });
    const hidden = await t.app.inject({ url: `/v1/sdk/dashboards/${ok.json().facadeId}`, headers: other.headers });
    expect([hidden.statusCode, hidden.json()]).toEqual([404, { success: false, error: `Dashboard ${ok.json().facadeId} not found` }]);
    const shown = await t.app.inject({ url: `/v1/sdk/dashboards/${ok.json().facadeId}`, headers: scoped });
    expect([shown.statusCode, shown.json().owner]).toEqual([200, 'ACME']);
  });

  it('?dryRun=true validates and shows the plan, writing nothing', async () => {
    const res = await post(t, payload(), '/v1/sdk/import?dryRun=true');
    expect([res.statusCode, res.json()]).toEqual([
      200,
      {
        success: true,
        dryRun: true,
        manifest: 'dashboards/Sales-dashboard.yaml',
        facadeId: '(new)',
        experiments: [
          {
            experimentId: '(new)',
            section: 'Sales dashboard',
            charts: [
              { chartId: 'chart_1', chartType: 'CH00055', chartTitle: 'Revenue' },
              { chartId: 'chart_2', chartType: 'CH00003', chartTitle: 'By region' },
              { chartId: 'chart_3', chartType: 'CH00014', chartTitle: 'Trend' },
            ],
          },
        ],
      },
    ]);
    expect(dashboardFiles(t)).toEqual([]);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM facades').get()).toEqual({ n: 0 });
    expect(t.rt.reconciler.listStatus({ kind: 'Dashboard' })).toEqual([]);
    const invalid = await post(t, payload({ charts: [] }), '/v1/sdk/import?dryRun=true');
    expect(invalid.statusCode).toBe(400);
    // The plan names the file an import would really use.
    await post(t, payload());
    expect((await post(t, payload(), '/v1/sdk/import?dryRun=true')).json().manifest).toBe('dashboards/Sales-dashboard-2.yaml');
  });
});

describe('POST /v1/sdk/import when the apply fails', () => {
  let t: TestApp;
  beforeEach(async () => {
    const appliers = defaultAppliers().map((a) =>
      a.kind === 'Dashboard'
        ? {
            ...a,
            apply: () => {
              throw new StepError('facade', 'the store refused the facade');
            },
          }
        : a,
    );
    t = await setup({ appliers });
  });
  afterEach(async () => t.close());

  it('answers 422 with the step and withdraws the manifest', async () => {
    const res = await post(t, payload());
    expect([res.statusCode, res.json()]).toEqual([422, { success: false, error: 'facade: the store refused the facade' }]);
    expect(dashboardFiles(t)).toEqual([]);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM facades').get()).toEqual({ n: 0 });
    expect(t.rt.reconciler.status.get('Dashboard/Sales-dashboard')).toBeUndefined();
  });

  it('?dryRun=true goes through the same apply (the reconciler\'s dry run): the same 422, nothing written', async () => {
    const dry = await post(t, payload(), '/v1/sdk/import?dryRun=true');
    expect([dry.statusCode, dry.json()]).toEqual([422, { success: false, error: 'facade: the store refused the facade' }]);
    expect(dashboardFiles(t)).toEqual([]);
    expect(t.rt.db.prepare('SELECT COUNT(*) AS n FROM facades').get()).toEqual({ n: 0 });
  });
});

describe('GET /v1/sdk/dashboards/{facadeId}', () => {
  let t: TestApp;
  beforeEach(async () => {
    t = await setup();
  });
  afterEach(async () => t.close());

  const get = (id: string, headers: Record<string, string> = KEY) => t.app.inject({ url: `/v1/sdk/dashboards/${id}`, headers });

  it('shows the stored dashboard with what the defaults became', async () => {
    await post(t, payload({ tags: ['sales'], category: ['Finance'], layout: { columns: 3 } }));
    const res = await get('F2026A00001');
    expect(res.statusCode).toBe(200);
    const display = { showValues: true, showLegend: true, showTooltip: false, showNull: false, enableZoom: false, enableForecast: false, showXScrollBar: false, showYScrollBar: false };
    expect(res.json()).toEqual({
      success: true,
      owner: null,
      dashboard: {
        facadeId: 'F2026A00001',
        name: 'Sales dashboard',
        description: '',
        dataSource: { dbId: DB, connType: 'VDM' },
        layout: { columns: 3, chartHeight: '380px', kpiHeight: '180px', chartWidth: '100%' },
        category: ['Finance'],
        tags: ['sales', 'sdk-import'],
        isPublic: true,
        sections: [
          {
            experimentId: 'E2026A00001',
            name: 'Sales dashboard',
            topSection: false,
            category: false,
            charts: [
              { chartId: 'chart_1', title: 'Revenue', type: 'CH00055', measures: [{ field: 'revenue', aggregation: 'sum' }], dimensions: [], grid: { x: 0, y: 0, width: 3, height: 6 }, display, limit: 100 },
              { chartId: 'chart_2', title: 'By region', type: 'CH00003', measures: [{ field: 'revenue', aggregation: 'sum' }], dimensions: [{ field: 'region', isDate: false }], grid: { x: 0, y: 6, width: 12, height: 13 }, display, limit: 100 },
              {
                chartId: 'chart_3', title: 'Trend', type: 'CH00014', measures: [{ field: 'revenue', aggregation: 'sum' }], dimensions: [{ field: 'day', isDate: true }],
                grid: { x: 0, y: 19, width: 12, height: 13 }, display, limit: 100, drillDown: 'By region', drillDownChartId: 'chart_2',
              },
            ],
          },
        ],
        createdBy: USER.userId,
        createdAt: '2026-03-01T10:00:00.000Z',
        updatedAt: '2026-03-01T10:00:00.000Z',
      },
    });
  });

  it('round trip: the shown dashboard imports again as the same dashboard', async () => {
    await post(t, payload({ tags: ['sdk-import'], description: 'd', templateType: 'grid' }));
    const first = (await get('F2026A00001')).json().dashboard;
    const again = await post(t, first);
    expect(again.statusCode).toBe(201);
    const second = (await get(again.json().facadeId)).json().dashboard;
    const strip = (d: Record<string, unknown>) => ({ ...d, facadeId: undefined, sections: (d.sections as { experimentId: string }[]).map((s) => ({ ...s, experimentId: undefined })) });
    expect(strip(second)).toEqual(strip(first));
    expect(second.facadeId).toBe('F2026A00002');
  });

  it('answers 404 for an unknown facade, 401 without a key', async () => {
    expect([(await get('F2026A09999')).statusCode, (await get('F2026A09999')).json()]).toEqual([404, { success: false, error: 'Dashboard F2026A09999 not found' }]);
    expect((await get('F2026A09999', {})).statusCode).toBe(401);
  });
});
