import type { Database } from 'better-sqlite3';
import { manifest, type TestRuntime } from '../../../helpers/runtime.ts';

export const CORE_MODEL_ID = 'SM2026A00001';
export const CONNECTION_ID = 'D2026A00001';

/** A core model every client inherits from (and nothing else). */
export function writeCoreModel(t: TestRuntime, modelId = CORE_MODEL_ID): void {
  t.write(`core-models/${modelId}.yaml`, manifest('CoreModel', `core-${modelId}`, { modelId, name: 'Retail core', definition: { columns: ['region'] } }));
}

/** A minimal valid onboarding package; `overrides` replace top-level fields. */
export function onboardingPackage(clientId = 'ACME', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    clientId,
    clientName: `${clientId} Retail`,
    connectionId: CONNECTION_ID,
    coreModelId: CORE_MODEL_ID,
    vdm: [
      {
        name: 'Sales',
        selectedColumns: ['region', 'product', { name: 'order_date' }, 'revenue'],
        measureConfiguration: [{ label: 'Total revenue', column: 'revenue', aggregation: 'SUM' }],
      },
    ],
    ...overrides,
  };
}

/** A package with one dashboard of two sections on the first VDM's fields. */
export function packageWithDashboard(clientId = 'ACME', overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return onboardingPackage(clientId, {
    vdm: [
      {
        name: 'Sales',
        selectedColumns: ['region', 'product', { name: 'order_date' }, 'revenue'],
        measureConfiguration: [{ label: 'Total revenue', column: 'revenue', aggregation: 'SUM' }],
        securityEnabled: true,
        securityBindings: { scopeColumn: 'region' },
        userScopeTable: { table: 'USER_SCOPE', userColumn: 'employee_id' },
        scopeDefnTable: { table: 'SCOPE_DEFN' },
      },
      { name: 'Customers', selectedColumns: ['customer_id', 'region'] },
    ],
    dashboards: [
      {
        name: 'Sales overview',
        description: 'Revenue at a glance',
        templateType: 'standard',
        layoutTemplateName: 'two-column',
        tags: ['sales'],
        sections: [
          {
            name: 'Summary',
            topSection: true,
            charts: [
              { title: 'Revenue', type: 'kpi', measures: ['revenue'], dimensions: [] },
              { title: 'Total', type: 'kpi', measures: [{ field: 'Total revenue', aggregation: 'as-is' }], dimensions: [] },
            ],
          },
          { name: 'By region', charts: [{ title: 'Revenue by region', type: 'bar', measures: [{ field: 'revenue', aggregation: 'sum' }], dimensions: ['region'] }] },
        ],
      },
    ],
    ...overrides,
  });
}

export function clientManifest(pkg: Record<string, unknown>, name = String(pkg.clientId)): Record<string, unknown> {
  return manifest('Client', name, pkg);
}

/** Every row of the tables onboarding touches, to compare a store before and after. */
export function snapshot(db: Database, tables: readonly string[] = RESOURCE_TABLES): Record<string, unknown[]> {
  return Object.fromEntries(tables.map((t) => [t, db.prepare(`SELECT * FROM ${t} ORDER BY 1, 2`).all()]));
}

export const RESOURCE_TABLES = ['connections', 'semantic_models', 'vdms', 'facades', 'experiments', 'id_sequences', 'clients'] as const;

export function count(db: Database, table: string, where = '1 = 1', ...args: unknown[]): number {
  return (db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE ${where}`).get(...args) as { n: number }).n;
}

/**
 * The invariant "never half a client": every ACTIVE client has its model, all its VDMs,
 * facades and experiments; nothing of a client exists without an ACTIVE registry row.
 */
export function assertWholeClients(db: Database): string[] {
  const errors: string[] = [];
  const rows = db.prepare('SELECT client_id, status, model_id, vdm_ids, facade_ids, experiment_ids FROM clients').all() as {
    client_id: string;
    status: string;
    model_id: string | null;
    vdm_ids: string;
    facade_ids: string;
    experiment_ids: string;
  }[];
  const active = new Set(rows.filter((r) => r.status === 'ACTIVE').map((r) => r.client_id));
  for (const r of rows.filter((x) => x.status === 'ACTIVE')) {
    if (!r.model_id || count(db, 'semantic_models', 'model_id = ?', r.model_id) !== 1) errors.push(`${r.client_id}: model missing`);
    for (const id of JSON.parse(r.vdm_ids) as string[]) if (count(db, 'vdms', 'vdm_id = ?', id) !== 1) errors.push(`${r.client_id}: vdm ${id} missing`);
    for (const id of JSON.parse(r.facade_ids) as string[]) if (count(db, 'facades', 'facade_id = ?', id) !== 1) errors.push(`${r.client_id}: facade ${id} missing`);
    for (const id of JSON.parse(r.experiment_ids) as string[]) {
      if (count(db, 'experiments', 'experiment_id = ?', id) !== 1) errors.push(`${r.client_id}: experiment ${id} missing`);
    }
  }
  for (const table of ['semantic_models', 'vdms', 'facades']) {
    const owners = db.prepare(`SELECT DISTINCT client_id FROM ${table} WHERE client_id IS NOT NULL`).all() as { client_id: string }[];
    for (const o of owners) if (!active.has(o.client_id)) errors.push(`${table}: rows of ${o.client_id}, which is not ACTIVE`);
  }
  return errors;
}

/** The trigger-kept per-status counts (migration 0003) agree with the rows. */
export function statusCounts(db: Database): { kept: Record<string, number>; actual: Record<string, number> } {
  const kept = Object.fromEntries((db.prepare('SELECT status, n FROM client_status_counts').all() as { status: string; n: number }[]).map((r) => [r.status, r.n]));
  const actual: Record<string, number> = { ACTIVE: 0, FAILED: 0, SUSPENDED: 0, OFFBOARDED: 0, DELETED: 0 };
  for (const r of db.prepare('SELECT status, COUNT(*) AS n FROM clients GROUP BY status').all() as { status: string; n: number }[]) actual[r.status] = r.n;
  return { kept, actual };
}
