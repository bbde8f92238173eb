/** A valid import payload (docs/contract/api.md §2.5) with one step of every type; tests copy and break it. */
export function fullPayload(): Record<string, unknown> {
  return {
    name: 'Orders nightly',
    description: 'Orders into reporting',
    category: 'sales',
    tags: ['orders'],
    source: { connectionId: 'D2026A00001', type: 'api', config: { endpoint: 'https://shop.example.com/orders', paginated: true } },
    destination: { connectionId: 'D2026A00002', schemaName: 'reporting' },
    steps: [
      { type: 'source', config: { endpoint: 'https://shop.example.com/returns' } },
      {
        type: 'transform',
        config: {
          fieldMappings: [{ source: 'orderId', target: 'order_id' }],
          rules: [
            { field: 'order_id', rule: 'to_integer' },
            { field: 'code', rule: 'pad_trim', params: { length: 8, padChar: '0' } },
          ],
        },
      },
      {
        type: 'validate',
        config: {
          rules: [
            { field: 'order_id', rule: 'not_null' },
            { field: 'code', rule: 'regex', params: { pattern: '^[0-9]{8}$' } },
          ],
        },
      },
      {
        type: 'quality',
        config: {
          rules: [
            { field: 'order_id', rule: 'deduplicate', params: { keys: ['order_id'] } },
            { field: 'amount', rule: 'outlier_detection', params: { method: 'zscore', threshold: 3 } },
            { field: 'email', rule: 'completeness_check' },
          ],
        },
      },
      { type: 'db_lookup', name: 'Customer lookup', config: { connectionId: 'D2026A00003', tableName: 'customers', lookupKey: 'customer_id', joinField: 'id' } },
      { type: 'stage', config: { tableName: 'orders_stage', schemaName: 'staging' } },
      { type: 'load', config: { tableName: 'orders' } },
      { type: 'reconcile', config: {} },
    ],
    schedule: { isEnabled: true, frequency: 'daily', startDate: '2026-01-01', startTime: '02:00' },
  };
}

/** The smallest valid payload. */
export function minimalPayload(name = 'Minimal'): Record<string, unknown> {
  return {
    name,
    source: { connectionId: 'D2026A00001', type: 'database' },
    destination: { connectionId: 'D2026A00002' },
    steps: [{ type: 'load', config: { tableName: 't' } }],
  };
}
