import { stringify } from 'yaml';

/** The example store prerequisites every scenario starts from (manifests/ of the repo). */
export const CORE_MODEL_ID = 'SM2026A00001';
export const CONNECTION_ID = 'D2026A00001';
export const COLUMNS = ['region', 'product', 'order_date', 'revenue', 'quantity', 'customer_id'];

export interface ManifestObject {
  apiVersion: 'bi.controller/v1';
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: Record<string, unknown>;
}

export const manifest = (kind: string, name: string, spec: Record<string, unknown>): ManifestObject => ({
  apiVersion: 'bi.controller/v1',
  kind,
  metadata: { name },
  spec,
});

export const toYaml = (m: ManifestObject): string => stringify(m);

export const coreModelManifest = (): ManifestObject =>
  manifest('CoreModel', 'retail-core', {
    modelId: CORE_MODEL_ID,
    name: 'Retail core model',
    description: 'Sales, customers and products shared by every retail client.',
    definition: { datasets: [{ name: 'sales', table: 'FACT_SALES' }], columns: COLUMNS, measures: [{ label: 'Revenue', expression: 'SUM(revenue)' }] },
  });

export const connectionManifest = (): ManifestObject =>
  manifest('Connection', 'acme-warehouse', {
    connectionId: CONNECTION_ID,
    name: 'ACME warehouse',
    vendor: 'SNOWFLAKE',
    accountUrl: 'https://acme.snowflakecomputing.com',
    warehouse: 'REPORTING_WH',
    database: 'ACME',
    schema: 'ANALYTICS',
    username: 'svc_bi',
    passwordEnv: 'BI_CONN_ACME_WAREHOUSE',
    // Every benchmark client onboards onto this one warehouse: a shared platform connection.
    shared: true,
    tenantSchema: 't_{clientId}',
  });

/** The prerequisite manifests as files: relative path → YAML text. */
export function prerequisiteFiles(): Record<string, string> {
  return {
    'core-models/retail-core.yaml': toYaml(coreModelManifest()),
    'connections/acme-warehouse.yaml': toYaml(connectionManifest()),
  };
}

const chart = (title: string, type: string, measure: string, dimension?: string) => ({
  title,
  type,
  measures: [{ field: measure, aggregation: 'sum' }],
  dimensions: dimension ? [dimension] : [],
});

/** A realistic dashboard import (docs/contract/api.md §2.4): a KPI, a bar, a line with a drill-down. */
export function dashboardPayload(name: string): Record<string, unknown> {
  return {
    name,
    description: 'Revenue and quantity per region',
    dataSource: { dbId: CONNECTION_ID },
    tags: ['bench'],
    charts: [
      chart('Revenue', 'kpi', 'revenue'),
      { ...chart('Revenue by region', 'bar', 'revenue', 'region'), sort: [{ field: 'revenue', direction: 'desc' }] },
      { title: 'Orders over time', type: 'line', measures: [{ field: 'quantity', aggregation: 'count' }], dimensions: [{ field: 'order_date', isDate: true }], drillDown: 'Revenue by region' },
    ],
  };
}

const vdm = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: `${name} mart`,
  selectedColumns: COLUMNS,
  measureConfiguration: [{ label: 'Total revenue', column: 'revenue', aggregation: 'SUM' }],
  ...extra,
});

const onboardingDashboard = (name: string) => ({
  name,
  templateType: 'standard',
  sections: [
    { name: 'Summary', topSection: true, charts: [chart('Revenue', 'kpi', 'revenue'), chart('Quantity', 'kpi', 'quantity')] },
    { name: 'Regions', category: true, charts: [chart('Revenue by region', 'bar', 'revenue', 'region'), chart('Revenue by product', 'pie', 'revenue', 'product')] },
  ],
});

/** An onboarding package (docs/contract/api.md §2.3) with `vdms` VDMs and `dashboards` dashboards. */
export function onboardingPackage(clientId: string, opts: { vdms?: number; dashboards?: number; connectionId?: string } = {}): Record<string, unknown> {
  const vdms = opts.vdms ?? 3;
  const dashboards = opts.dashboards ?? 2;
  return {
    clientId,
    clientName: `${clientId} Retail`,
    connectionId: opts.connectionId ?? CONNECTION_ID,
    coreModelId: CORE_MODEL_ID,
    externalIdKey: 'employee_id',
    security: { enabled: true },
    vdm: Array.from({ length: vdms }, (_, i) =>
      i === 1 ? vdm(`Mart ${i + 1}`, { securityEnabled: true, securityBindings: { scopeColumn: 'region' } }) : vdm(`Mart ${i + 1}`),
    ),
    ...(dashboards ? { dashboards: Array.from({ length: dashboards }, (_, i) => onboardingDashboard(`Overview ${i + 1}`)) } : {}),
  };
}

/** A pipeline import (docs/contract/api.md §2.5). */
export function pipelinePayload(name: string): Record<string, unknown> {
  return {
    name,
    description: 'Orders from the shop API into the reporting database',
    category: 'sales',
    tags: ['orders'],
    source: { connectionId: CONNECTION_ID, type: 'api', config: { endpoint: 'https://shop.example.com/api/orders', method: 'GET', paginated: true, paginationKey: 'next', rootKey: 'data' } },
    destination: { connectionId: CONNECTION_ID, schemaName: 'staging' },
    steps: [
      { type: 'transform', config: { fieldMappings: [{ source: 'orderId', target: 'order_id' }], rules: [{ field: 'order_id', rule: 'to_integer' }] } },
      { type: 'validate', config: { rules: [{ field: 'order_id', rule: 'not_null' }] } },
      { type: 'load', config: { tableName: 'orders' } },
    ],
    schedule: { isEnabled: true, frequency: 'daily', startDate: '2026-01-01', startTime: '02:00' },
  };
}

/** A small Client manifest for the scale benchmark: one VDM, no dashboard. */
export function clientManifest(clientId: string): ManifestObject {
  return manifest('Client', clientId, onboardingPackage(clientId, { vdms: 1, dashboards: 0 }));
}
