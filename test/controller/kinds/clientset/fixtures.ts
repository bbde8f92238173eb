import { manifest } from '../../../helpers/runtime.ts';

/** A ClientSet generating one Connection per input (no references: applies on an empty store). */
export function connectionSet(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return manifest('ClientSet', name, {
    resources: [
      {
        kind: 'Connection',
        metadata: { name: '{{ input.id | downcase }}-wh' },
        spec: {
          name: '{{ input.displayName }} warehouse',
          vendor: 'SNOWFLAKE',
          accountUrl: 'https://{{ input.id | downcase }}.snowflakecomputing.com',
          warehouse: 'WH',
          database: '{{ input.id }}',
          schema: 'ANALYTICS',
          username: 'svc_bi',
          passwordEnv: 'BI_CONN_{{ input.id }}',
        },
      },
    ],
    ...spec,
  });
}

export function inputs(...ids: string[]): { id: string; displayName: string }[] {
  return ids.map((id) => ({ id, displayName: `${id} Corp` }));
}

export const CORE_MODEL = manifest('CoreModel', 'retail-core', {
  modelId: 'SM2026A00001',
  name: 'Retail core model',
  definition: { datasets: [{ name: 'sales', table: 'FACT_SALES' }], columns: [{ name: 'region', type: 'text' }, { name: 'revenue', type: 'number' }] },
});

/** A ClientSet generating a Connection and a Client per input (`conn`: the pinned connection ID). */
export function tenantSet(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  const set = connectionSet(name, spec) as { spec: { resources: unknown[] } };
  const [conn] = set.spec.resources as { spec: Record<string, unknown> }[];
  conn.spec.connectionId = '{{ input.conn }}';
  set.spec.resources.push({
    kind: 'Client',
    metadata: { name: '{{ input.id }}' },
    spec: {
      clientId: '{{ input.id }}',
      clientName: '{{ input.displayName }}',
      connectionId: '{{ input.conn }}',
      coreModelId: 'SM2026A00001',
      vdm: [{ name: 'Sales', selectedColumns: ['region', 'revenue'] }],
    },
  });
  return set as unknown as Record<string, unknown>;
}

export function tenants(...ids: string[]): { id: string; displayName: string; conn: string }[] {
  return ids.map((id, i) => ({ id, displayName: `${id} Corp`, conn: `D2026A${String(i + 1).padStart(5, '0')}` }));
}
