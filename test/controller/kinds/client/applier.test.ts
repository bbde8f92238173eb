import { copyFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { clientApplier, createClientApplier } from '../../../../controller/kinds/client/applier.ts';
import { CLIENT_STEPS, type ClientRefs, type ClientSpec, type ClientStep } from '../../../../controller/kinds/client/types.ts';
import { defaultAppliers } from '../../../../controller/kinds/index.ts';
import { IdAllocator } from '../../../../controller/store/ids.ts';
import type { Applier, Manifest } from '../../../../controller/types.ts';
import { makeTestRuntime, manifest, type TestRuntime } from '../../../helpers/runtime.ts';
import {
  CONNECTION_ID,
  assertWholeClients,
  clientManifest,
  count,
  onboardingPackage,
  packageWithDashboard,
  snapshot,
  statusCounts,
  writeCoreModel,
} from './fixtures.ts';
import { testSchemas } from '../../../helpers/schemas.ts';

const RESOURCES = ['connections', 'semantic_models', 'vdms', 'facades', 'experiments', 'id_sequences'] as const;

function withClientApplier(applier: Applier<ClientSpec>): Applier[] {
  return defaultAppliers().map((a) => (a.kind === 'Client' ? (applier as Applier) : a));
}

function clientRow(t: TestRuntime, id = 'ACME'): Record<string, unknown> | undefined {
  return t.rt.db.prepare('SELECT * FROM clients WHERE client_id = ?').get(id) as Record<string, unknown> | undefined;
}

describe('Client applier through manifest files', () => {
  let t: TestRuntime;
  afterEach(async () => t?.close());

  it('applies a dropped-in manifest: whole client, onboardedBy controller, progress events per step', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    const steps: string[] = [];
    t.rt.reconciler.on('event', (e: { type: string; key: string; step?: string }) => {
      if (e.type === 'step' && e.key === 'Client/acme-file') steps.push(e.step ?? '');
    });
    t.write('clients/acme.yaml', clientManifest(packageWithDashboard('acme'), 'acme-file'));
    const report = await t.sync();
    expect(report.applied).toContain('Client/acme-file');
    expect(steps).toEqual([...CLIENT_STEPS]);
    expect(clientRow(t)).toMatchObject({
      client_id: 'ACME',
      status: 'ACTIVE',
      onboarded_by: 'controller',
      is_active: 1,
      is_deleted: 0,
      manifest_key: 'Client/acme-file',
    });
    expect(t.rt.reconciler.status.get('Client/acme-file')?.resourceIds).toEqual({
      clientId: 'ACME',
      connectionId: CONNECTION_ID,
      connectionCreated: true,
      modelId: 'SM2026A00002',
      vdmIds: ['V2026A00001', 'V2026A00002'],
      facadeIds: ['F2026A00001'],
      experimentIds: ['E2026A00001', 'E2026A00002'],
    });
    const experiments = t.rt.db.prepare('SELECT section, top_section, category FROM experiments ORDER BY position').all();
    expect(experiments).toEqual([
      { section: 'Summary', top_section: 1, category: 0 },
      { section: 'By region', top_section: 0, category: 0 },
    ]);
    const facade = t.rt.db.prepare('SELECT vdm_id, definition FROM facades').get() as { vdm_id: string; definition: string };
    expect(facade.vdm_id).toBe('V2026A00001');
    // The one facade shape of every dashboard: the import payload's fields on the client's connection and first VDM.
    expect(JSON.parse(facade.definition)).toMatchObject({
      mode: 'sections',
      dataSource: { dbId: 'D2026A00001', vdmId: 'V2026A00001', connType: 'VDM' },
      layout: { columns: 2, chartHeight: '380px', kpiHeight: '180px', chartWidth: '100%' },
      layoutTemplateName: 'two-column',
      templateType: 'standard',
      category: [],
      tags: ['sales'],
      isPublic: true,
    });
    expect(assertWholeClients(t.rt.db)).toEqual([]);
  });

  it('links an existing connection instead of creating one, and leaves it on prune', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: CONNECTION_ID, name: 'Warehouse' }));
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    await t.sync();
    expect(t.rt.reconciler.status.get('Client/ACME')?.resourceIds.connectionCreated).toBe(false);
    expect(t.rt.db.prepare('SELECT name, manifest_key FROM connections').all()).toEqual([{ name: 'Warehouse', manifest_key: 'Connection/wh' }]);
    t.remove('clients/ACME.yaml');
    await t.sync();
    expect(count(t.rt.db, 'connections')).toBe(1);
  });

  for (const step of CLIENT_STEPS) {
    it(`rolls back everything when "${step}" fails and saves a FAILED audit entry`, async () => {
      t = await makeTestRuntime({ appliers: withClientApplier(createClientApplier({ failAt: step })) });
      writeCoreModel(t);
      await t.sync();
      const before = snapshot(t.rt.db, [...RESOURCES]);
      t.clock.advance(5000);
      t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
      await t.sync();
      expect(snapshot(t.rt.db, [...RESOURCES])).toEqual(before);
      expect(clientRow(t)).toEqual({
        client_id: 'ACME',
        client_name: 'ACME Retail',
        description: '',
        connection_id: CONNECTION_ID,
        model_id: null,
        vdm_ids: '[]',
        facade_ids: '[]',
        experiment_ids: '[]',
        core_model_id: 'SM2026A00001',
        status: 'FAILED',
        onboarded_by: 'controller',
        onboarded_date: '2026-03-01T10:00:05.000Z',
        last_modified_date: '2026-03-01T10:00:05.000Z',
        is_active: 0,
        is_deleted: 0,
        failed_step: step,
        failure_reason: 'injected failure',
        manifest_key: 'Client/ACME',
        retain_until: null,
      });
      const status = t.rt.reconciler.status.get('Client/ACME');
      expect(status).toMatchObject({ phase: 'Failed', message: `${step}: injected failure`, attempts: 1 });
      expect(statusCounts(t.rt.db).kept).toEqual({ ACTIVE: 0, FAILED: 1, SUSPENDED: 0, OFFBOARDED: 0, DELETED: 0 });
    });
  }

  it('retries with backoff and turns the FAILED entry ACTIVE once the fault is fixed', async () => {
    let fault: ClientStep | undefined = 'publish vdm';
    t = await makeTestRuntime({ appliers: withClientApplier(createClientApplier({ failAt: () => fault })) });
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    await t.sync();
    expect(t.scheduler.delays).toEqual([1000]);
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(t.scheduler.delays).toEqual([1000, 2000]);
    expect(clientRow(t)?.status).toBe('FAILED');
    fault = undefined;
    t.clock.advance(3000);
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(t.rt.reconciler.status.get('Client/ACME')).toMatchObject({ phase: 'Synced', attempts: 0 });
    expect(clientRow(t)).toMatchObject({ status: 'ACTIVE', failed_step: null, failure_reason: null, is_active: 1, onboarded_date: '2026-03-01T10:00:03.000Z' });
    expect(assertWholeClients(t.rt.db)).toEqual([]);
  });

  it('fails on a missing core model and converges when the core model appears', async () => {
    t = await makeTestRuntime();
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    await t.sync();
    expect(t.rt.reconciler.status.get('Client/ACME')?.message).toBe('create model: core model SM2026A00001 does not exist');
    expect(clientRow(t)).toMatchObject({ status: 'FAILED', failed_step: 'create model' });
    writeCoreModel(t);
    await t.sync();
    t.scheduler.fireAll();
    await t.rt.reconciler.idle();
    expect(clientRow(t)?.status).toBe('ACTIVE');
  });

  it('updates in place: unchanged VDMs, dashboards and experiments keep their IDs', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    const pkg = packageWithDashboard();
    t.write('clients/ACME.yaml', clientManifest(pkg));
    await t.sync();
    const before = t.rt.reconciler.status.get('Client/ACME')?.resourceIds as ClientRefs;
    const vdms = pkg.vdm as Record<string, unknown>[];
    const dashboards = pkg.dashboards as { sections: { name: string; charts: unknown[] }[] }[];
    // Change the second VDM, add a third, add a section, rename nothing.
    vdms[1].description = 'Customer master';
    vdms.push({ name: 'Products', selectedColumns: ['product'] });
    dashboards[0].sections.push({ name: 'Detail', charts: [{ title: 'Table', type: 'table', measures: ['revenue'], dimensions: ['product'] }] });
    t.clock.advance(60_000);
    t.write('clients/ACME.yaml', clientManifest({ ...pkg, clientName: 'ACME Retail Group' }));
    await t.sync();
    const after = t.rt.reconciler.status.get('Client/ACME')?.resourceIds as ClientRefs;
    expect(after).toEqual({
      ...before,
      vdmIds: [...before.vdmIds, 'V2026A00003'],
      experimentIds: [...before.experimentIds, 'E2026A00003'],
    });
    expect(clientRow(t)).toMatchObject({
      client_name: 'ACME Retail Group',
      onboarded_date: '2026-03-01T10:00:00.000Z',
      last_modified_date: '2026-03-01T10:01:00.000Z',
    });
    // Removing a VDM and a dashboard removes their rows; the rest stays.
    t.clock.advance(60_000);
    t.write('clients/ACME.yaml', clientManifest({ ...pkg, vdm: [vdms[0], vdms[2]], dashboards: [] }));
    await t.sync();
    const last = t.rt.reconciler.status.get('Client/ACME')?.resourceIds as ClientRefs;
    expect(last.vdmIds).toEqual(['V2026A00001', 'V2026A00003']);
    expect(last.facadeIds).toEqual([]);
    expect(count(t.rt.db, 'facades') + count(t.rt.db, 'experiments')).toBe(0);
    expect(count(t.rt.db, 'vdms')).toBe(2);
  });

  it('keeps the last good state when an update fails', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
    await t.sync();
    const good = snapshot(t.rt.db);
    const broken = packageWithDashboard();
    (broken.dashboards as { sections: { charts: { measures: unknown[] }[] }[] }[])[0].sections[0].charts[0].measures = ['nope'];
    t.clock.advance(1000);
    t.write('clients/ACME.yaml', clientManifest({ ...broken, clientName: 'Renamed' }));
    await t.sync();
    expect(t.rt.reconciler.status.get('Client/ACME')).toMatchObject({
      phase: 'Failed',
      message: 'deploy dashboard: dashboards[0].sections[0].charts[0].measures[0] "nope" is not a column of the VDM',
    });
    expect(snapshot(t.rt.db)).toEqual(good);
  });

  it('refuses a second manifest claiming the clientId of an ACTIVE client', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    await t.sync();
    const good = snapshot(t.rt.db);
    t.write('clients/acme-copy.yaml', clientManifest(onboardingPackage('acme', { clientName: 'Impostor' }), 'acme-copy'));
    await t.sync();
    expect(t.rt.reconciler.status.get('Client/acme-copy')).toMatchObject({
      phase: 'Failed',
      message: 'validate: spec.clientId client ACME is already onboarded by Client/ACME',
    });
    expect(snapshot(t.rt.db)).toEqual(good);
  });

  it('offboards a removed manifest: OFFBOARDED until BI_RETENTION has passed, every resource and ID kept', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
    t.write('clients/GLOBEX.yaml', clientManifest(onboardingPackage('GLOBEX', { connectionId: 'D2026A00005' })));
    await t.sync();
    const before = snapshot(t.rt.db, RESOURCES);
    const refs = t.rt.reconciler.status.get('Client/ACME')?.resourceIds;
    t.clock.advance(1000);
    t.remove('clients/ACME.yaml');
    await t.sync();
    expect(clientRow(t)).toMatchObject({
      status: 'OFFBOARDED',
      is_active: 0,
      is_deleted: 0,
      last_modified_date: '2026-03-01T10:00:01.000Z',
      retain_until: '2026-03-31T10:00:01.000Z',
    });
    expect(t.rt.reconciler.status.get('Client/ACME')?.phase).toBe('Pruned');
    expect(snapshot(t.rt.db, RESOURCES)).toEqual(before);
    expect(clientRow(t, 'GLOBEX')?.status).toBe('ACTIVE');
    const counts = statusCounts(t.rt.db);
    expect(counts.kept).toEqual(counts.actual);

    // The file comes back after a restart: ACTIVE again with the very same IDs, nothing new created.
    t = await t.restart();
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
    await t.sync();
    expect(clientRow(t)).toMatchObject({ status: 'ACTIVE', is_deleted: 0, is_active: 1, retain_until: null, onboarded_date: '2026-03-01T10:00:00.000Z' });
    expect(t.rt.reconciler.status.get('Client/ACME')?.resourceIds).toEqual(refs);
    expect(snapshot(t.rt.db, RESOURCES)).toEqual(before);
  });

  it('suspends and resumes through spec.suspended: SUSPENDED, not active, resources untouched', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
    await t.sync();
    const before = snapshot(t.rt.db, RESOURCES);
    t.write('clients/ACME.yaml', clientManifest({ ...packageWithDashboard(), suspended: true }));
    await t.sync();
    expect(clientRow(t)).toMatchObject({ status: 'SUSPENDED', is_active: 0, is_deleted: 0 });
    expect(snapshot(t.rt.db, RESOURCES)).toEqual(before);
    t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
    await t.sync();
    expect(clientRow(t)).toMatchObject({ status: 'ACTIVE', is_active: 1 });
    expect(snapshot(t.rt.db, RESOURCES)).toEqual(before);
  });

  it('never binds a client to the connection another client\'s onboarding created: Failed, nothing of it stored', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    await t.sync();
    t.write('clients/GLOBEX.yaml', clientManifest(onboardingPackage('GLOBEX')));
    await t.sync();
    expect(t.rt.reconciler.status.get('Client/GLOBEX')).toMatchObject({ phase: 'Failed', message: expect.stringContaining(`Connection ${CONNECTION_ID} belongs to another client`) });
    expect(count(t.rt.db, 'semantic_models', "client_id = 'GLOBEX'")).toBe(0);
    expect(t.rt.db.prepare('SELECT owner_client_id FROM connections').all()).toEqual([{ owner_client_id: 'ACME' }]);
  });

  it('keeps a shared connection two clients use when one of them is pruned', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('connections/shared.yaml', manifest('Connection', 'shared', { connectionId: CONNECTION_ID, name: 'Platform', shared: true, tenantSchema: 't_{clientId}' }));
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    t.write('clients/GLOBEX.yaml', clientManifest(onboardingPackage('GLOBEX')));
    await t.sync();
    t.remove('clients/ACME.yaml');
    await t.sync();
    expect(t.rt.db.prepare('SELECT owner_client_id, shared FROM connections').all()).toEqual([{ owner_client_id: null, shared: 1 }]);
    expect(clientRow(t, 'GLOBEX')?.status).toBe('ACTIVE');
  });

  it('a client claims an unowned Connection; spec.owner names it, and a change of owner fails', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: CONNECTION_ID, name: 'Warehouse' }));
    t.write('clients/ACME.yaml', clientManifest(onboardingPackage()));
    await t.sync();
    expect(t.rt.db.prepare('SELECT owner_client_id FROM connections').get()).toEqual({ owner_client_id: 'ACME' });
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: CONNECTION_ID, name: 'Warehouse', owner: 'GLOBEX' }));
    await t.sync();
    expect(t.rt.reconciler.status.get('Connection/wh')).toMatchObject({ phase: 'Failed', message: expect.stringContaining(`connection ${CONNECTION_ID} belongs to client ACME; its owner cannot change`) });
    t.write('connections/wh.yaml', manifest('Connection', 'wh', { connectionId: CONNECTION_ID, name: 'Warehouse', owner: 'ACME', shared: true, tenantSchema: 't_{clientId}' }));
    await t.sync();
    expect(t.rt.reconciler.status.get('Connection/wh')).toMatchObject({ phase: 'Failed', message: 'validate: spec.owner and spec.shared: true exclude each other' });
  });

  it('moves to another clientId when the manifest changes it: the old one is DELETED', async () => {
    t = await makeTestRuntime();
    writeCoreModel(t);
    t.write('clients/x.yaml', clientManifest(onboardingPackage('OLD'), 'x'));
    await t.sync();
    t.write('clients/x.yaml', clientManifest(onboardingPackage('NEW'), 'x'));
    await t.sync();
    expect(clientRow(t, 'OLD')?.status).toBe('DELETED');
    expect(clientRow(t, 'NEW')?.status).toBe('ACTIVE');
    expect(count(t.rt.db, 'semantic_models')).toBe(1);
    expect(assertWholeClients(t.rt.db)).toEqual([]);
  });

  it('applies the repository example manifests (core model, connection, ACME) to Synced', async () => {
    t = await makeTestRuntime();
    const root = join(import.meta.dirname, '../../../../manifests');
    for (const rel of ['core-models/retail-core.yaml', 'connections/acme-warehouse.yaml', 'clients/ACME.yaml']) {
      mkdirSync(join(t.manifests, rel, '..'), { recursive: true });
      copyFileSync(join(root, rel), join(t.manifests, rel));
    }
    const report = await t.sync();
    expect(report.failed).toEqual([]);
    expect(report.applied.sort()).toEqual(['Client/ACME', 'Connection/acme-warehouse', 'CoreModel/retail-core']);
    expect(clientRow(t)?.status).toBe('ACTIVE');
  });
});

describe('Client applier called directly', () => {
  it('is idempotent: the same manifest applied again changes nothing (no new IDs, same lastModifiedDate)', async () => {
    const t = await makeTestRuntime();
    try {
      writeCoreModel(t);
      await t.sync();
      const schemas = testSchemas();
      const doc = clientManifest(packageWithDashboard());
      const validated = schemas.validateManifest(doc);
      if (!validated.ok) throw new Error('fixture does not validate');
      const m = validated.value as Manifest<ClientSpec>;
      const db = t.rt.db;
      const ids = new IdAllocator({ db, clock: t.clock.now });
      const apply = (previous: ClientRefs | undefined, now: Date) =>
        db.transaction(() => clientApplier.apply({ db, ids, now, key: 'Client/ACME', manifest: m, previous, actor: 'u1', step: () => {} }))() as ClientRefs;
      const first = apply(undefined, t.clock.now());
      const before = snapshot(db);
      t.clock.advance(3_600_000);
      const second = apply(first, t.clock.now());
      expect(second).toEqual(first);
      expect(snapshot(db)).toEqual(before);
    } finally {
      await t.close();
    }
  });

  it('turns an unexpected store error inside a step into a StepError of that step', async () => {
    const t = await makeTestRuntime();
    try {
      writeCoreModel(t);
      await t.sync();
      t.rt.db.exec('DROP TABLE experiments');
      t.write('clients/ACME.yaml', clientManifest(packageWithDashboard()));
      await t.sync();
      expect(t.rt.reconciler.status.get('Client/ACME')?.message).toBe('deploy dashboard: no such table: experiments');
      expect(clientRow(t)).toMatchObject({ status: 'FAILED', failed_step: 'deploy dashboard' });
      expect(count(t.rt.db, 'vdms')).toBe(0);
    } finally {
      await t.close();
    }
  });
});
