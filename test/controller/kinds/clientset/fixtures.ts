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
