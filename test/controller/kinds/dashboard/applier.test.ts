import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readDashboard } from '../../../../controller/kinds/dashboard/store.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';

const CONNECTION = manifest('Connection', 'wh', { connectionId: 'D2026A00001', name: 'Warehouse' });

function dashboard(spec: Record<string, unknown>, name = 'sales') {
  return manifest('Dashboard', name, { name: 'Sales', dataSource: { dbId: 'D2026A00001' }, ...spec });
}

const rows = (t: TestRuntime) => ({
  facades: t.rt.db.prepare('SELECT facade_id, name, created_by, created_at, updated_at FROM facades ORDER BY facade_id').all(),
  experiments: t.rt.db.prepare('SELECT experiment_id, facade_id, section, position, updated_at FROM experiments ORDER BY experiment_id').all(),
});

/** A VDM row with the given configuration (client onboarding's table, filled by hand). */
function seedVdm(t: TestRuntime, config: Record<string, unknown>): void {
  const at = '2026-01-01T00:00:00.000Z';
  t.rt.db.prepare("INSERT INTO core_models (model_id, name, created_at, updated_at) VALUES ('SM2026A00001', 'core', ?, ?)").run(at, at);
  t.rt.db
    .prepare("INSERT INTO semantic_models (model_id, client_id, core_model_id, name, created_at, updated_at) VALUES ('SM2026A00002', 'ACME', 'SM2026A00001', 'acme', ?, ?)")
    .run(at, at);
  t.rt.db
    .prepare(
      "INSERT INTO vdms (vdm_id, model_id, client_id, connection_id, name, position, config, created_at, updated_at) VALUES ('V2026A00001', 'SM2026A00002', 'ACME', 'D2026A00001', 'v', 0, ?, ?, ?)",
    )
    .run(JSON.stringify(config), at, at);
}

describe('Dashboard applier', () => {
  let t: TestRuntime;
  beforeEach(async () => {
    t = await makeTestRuntime();
    t.write('connections/wh.yaml', CONNECTION);
    await t.sync();
  });
  afterEach(async () => t.close());

  it('applies manifests/dashboards/regional-sales.yaml with the example connection', async () => {
    const root = join(import.meta.dirname, '../../../../manifests');
    cpSync(join(root, 'dashboards'), join(t.manifests, 'dashboards'), { recursive: true });
    await t.sync();
    const status = t.rt.reconciler.listStatus({ kind: 'Dashboard' });
    expect(status.map((s) => [s.key, s.phase, s.message])).toEqual([['Dashboard/regional-sales', 'Synced', '']]);
    const view = readDashboard(t.rt.db, String(status[0].resourceIds.facadeId));
    expect(view?.sections[0].charts.map((c) => [c.chartId, c.type, c.grid.y, c.drillDownChartId])).toEqual([
      ['chart_1', 'CH00055', 0, undefined],
      ['chart_2', 'CH00003', 6, undefined],
      ['chart_3', 'CH00014', 19, 'chart_2'],
    ]);
  });

  it('creates a facade and one experiment per section, with the defaults of the dashboard', async () => {
    t.write('dashboards/sales.yaml', {
      ...dashboard({ sections: [{ name: 'Overview', charts: [{ type: 'kpi', measures: ['rev'], dimensions: [] }] }, { name: 'Detail', topSection: true, charts: [{ type: 'table', measures: [], dimensions: [] }] }], tags: ['sdk-import', 'x', 'x'] }),
      metadata: { name: 'sales', annotations: { 'bi.controller/requested-by': 'U2026A00001' } },
    });
    await t.sync();
    const [status] = t.rt.reconciler.listStatus({ kind: 'Dashboard' });
    expect(status.resourceIds).toEqual({ facadeId: 'F2026A00001', experimentIds: ['E2026A00001', 'E2026A00002'] });
    const view = readDashboard(t.rt.db, 'F2026A00001');
    expect({ ...view, sections: view?.sections.map((s) => [s.experimentId, s.name, s.topSection, s.category, s.charts.length]) }).toEqual({
      facadeId: 'F2026A00001',
      name: 'Sales',
      description: '',
      dataSource: { dbId: 'D2026A00001', connType: 'VDM' },
      layout: { columns: 2, chartHeight: '380px', kpiHeight: '180px', chartWidth: '100%' },
      category: [],
      tags: ['x', 'sdk-import'],
      isPublic: true,
      sections: [
        ['E2026A00001', 'Overview', false, false, 1],
        ['E2026A00002', 'Detail', true, false, 1],
      ],
      createdBy: 'U2026A00001',
      createdAt: '2026-03-01T10:00:00.000Z',
      updatedAt: '2026-03-01T10:00:00.000Z',
    });
  });

  it('updates in place, keeping facade, experiment and chart IDs, and writes nothing when nothing changed', async () => {
    const charts = [
      { title: 'One', type: 'column', measures: ['a'], dimensions: [] },
      { title: 'Two', type: 'line', measures: ['b'], dimensions: [] },
    ];
    t.write('dashboards/sales.yaml', dashboard({ sections: [{ name: 'A', charts }, { name: 'B', charts: [{ title: 'Three', type: 'pie', measures: [], dimensions: [] }] }] }));
    await t.sync();
    const before = rows(t);
    t.clock.advance(60_000);
    // Same spec, other formatting: nothing is written.
    t.write('dashboards/sales.yaml', `# a comment\n${JSON.stringify(dashboard({ sections: [{ name: 'A', charts }, { name: 'B', charts: [{ title: 'Three', type: 'pie', measures: [], dimensions: [] }] }] }))}`);
    await t.sync();
    expect(rows(t)).toEqual(before);
    // A change of the facade only (description) does not touch the experiments.
    t.write('dashboards/sales.yaml', dashboard({ description: 'new', sections: [{ name: 'A', charts }, { name: 'B', charts: [{ title: 'Three', type: 'pie', measures: [], dimensions: [] }] }] }));
    await t.sync();
    expect(rows(t).experiments).toEqual(before.experiments);
    expect(rows(t).facades).toEqual([{ ...(before.facades[0] as object), updated_at: '2026-03-01T10:01:00.000Z' }]);
    // Section B removed, section C added, chart Two dropped, chart New added.
    t.clock.advance(60_000);
    t.write('dashboards/sales.yaml', dashboard({ sections: [{ name: 'A', charts: [{ title: 'New', type: 'bar', measures: [], dimensions: [] }, charts[0]] }, { name: 'C', charts: [{ title: 'Three', type: 'pie', measures: [], dimensions: [] }] }] }));
    await t.sync();
    const view = readDashboard(t.rt.db, 'F2026A00001');
    expect(view?.sections.map((s) => [s.experimentId, s.name, s.charts.map((c) => `${c.chartId}:${c.title}`)])).toEqual([
      ['E2026A00001', 'A', ['chart_4:New', 'chart_1:One']],
      ['E2026A00003', 'C', ['chart_3:Three']],
    ]);
    expect(rows(t).facades).toEqual([{ ...(before.facades[0] as object), updated_at: '2026-03-01T10:02:00.000Z' }]);
    expect(t.rt.reconciler.listStatus({ kind: 'Dashboard' })[0].resourceIds).toEqual({ facadeId: 'F2026A00001', experimentIds: ['E2026A00001', 'E2026A00003'] });
  });

  it('prunes the facade and its experiments when the manifest is removed', async () => {
    t.write('dashboards/sales.yaml', dashboard({ charts: [{ type: 'pie', measures: [], dimensions: [] }] }));
    t.write('dashboards/other.yaml', dashboard({ charts: [{ type: 'pie', measures: [], dimensions: [] }] }, 'other'));
    await t.sync();
    const kept = t.rt.reconciler.status.get('Dashboard/other')?.resourceIds as { facadeId: string; experimentIds: string[] };
    t.remove('dashboards/sales.yaml');
    await t.sync();
    expect(rows(t)).toEqual({
      facades: [{ facade_id: kept.facadeId, name: 'Sales', created_by: 'controller', created_at: '2026-03-01T10:00:00.000Z', updated_at: '2026-03-01T10:00:00.000Z' }],
      experiments: [{ experiment_id: kept.experimentIds[0], facade_id: kept.facadeId, section: 'Sales', position: 0, updated_at: '2026-03-01T10:00:00.000Z' }],
    });
    expect(t.rt.reconciler.status.get('Dashboard/sales')?.phase).toBe('Pruned');
  });

  it('fails (step validate) on a missing connection, an unknown VDM or a field outside the VDM, and converges once they exist', async () => {
    t.write('dashboards/sales.yaml', dashboard({ dataSource: { dbId: 'D2026A00009' }, charts: [{ type: 'pie', measures: ['a'], dimensions: [] }] }));
    t.write('dashboards/vdm.yaml', dashboard({ dataSource: { dbId: 'D2026A00001', vdmId: 'V2026A00001' }, charts: [{ type: 'pie', measures: ['revenue', 'cost'], dimensions: ['region'] }] }, 'vdm'));
    await t.sync();
    const messages = () => t.rt.reconciler.listStatus({ kind: 'Dashboard' }).map((s) => [s.key, s.phase, s.message]);
    expect(messages()).toEqual([
      ['Dashboard/sales', 'Failed', 'validate: spec.dataSource.dbId D2026A00009 is not an existing connection'],
      ['Dashboard/vdm', 'Failed', 'validate: spec.dataSource.vdmId V2026A00001 is not an existing VDM'],
    ]);
    seedVdm(t, { selectedColumns: ['revenue', { name: 'region' }] });
    await t.sync();
    expect(messages()[1]).toEqual(['Dashboard/vdm', 'Failed', 'validate: spec.charts[0].measures[1] "cost" is not a column of the VDM']);
    expect(rows(t).facades).toEqual([]);
  });

  it('fails a manifest whose charts break the semantic rules', async () => {
    t.write('dashboards/sales.yaml', dashboard({ charts: [{ type: 'pie', measures: [], dimensions: [], drillDown: 'none' }] }));
    await t.sync();
    expect(t.rt.reconciler.status.get('Dashboard/sales')?.message).toBe('validate: spec.charts[0].drillDown "none" must be the title of another chart of the same section');
  });
});
