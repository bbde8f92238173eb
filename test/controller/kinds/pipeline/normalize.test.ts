import { describe, expect, it } from 'vitest';
import { resolveSteps, STEP_LABELS } from '../../../../controller/kinds/pipeline/normalize.ts';
import type { PipelineSpec } from '../../../../controller/kinds/pipeline/types.ts';
import { fullPayload } from './fixtures.ts';
import { testSchemas } from '../../../helpers/schemas.ts';

const schemas = testSchemas();
function spec(body: Record<string, unknown>): PipelineSpec {
  const r = schemas.validate<PipelineSpec>('pipeline', body);
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.value;
}

describe('pipeline step resolution (inheritance and default names)', () => {
  it('generates the source step first, then the supplied steps with labels and inherited values', () => {
    expect(resolveSteps(spec(fullPayload()))).toEqual([
      { type: 'source', name: 'Source', config: { connectionId: 'D2026A00001', endpoint: 'https://shop.example.com/orders', paginated: true, method: 'GET' } },
      // An explicit source step inherits the top-level source and overrides the endpoint.
      { type: 'source', name: 'Source', config: { connectionId: 'D2026A00001', endpoint: 'https://shop.example.com/returns', paginated: true, method: 'GET' } },
      {
        type: 'transform',
        name: 'Transform',
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
        name: 'Validate',
        config: {
          rules: [
            { field: 'order_id', rule: 'not_null' },
            { field: 'code', rule: 'regex', params: { pattern: '^[0-9]{8}$' } },
          ],
        },
      },
      {
        type: 'quality',
        name: 'Data Quality',
        config: {
          rules: [
            { field: 'order_id', rule: 'deduplicate', params: { keys: ['order_id'] } },
            { field: 'amount', rule: 'outlier_detection', params: { method: 'zscore', threshold: 3 } },
            { field: 'email', rule: 'completeness_check' },
          ],
        },
      },
      // db_lookup inherits nothing: its connection is its own.
      { type: 'db_lookup', name: 'Customer lookup', config: { connectionId: 'D2026A00003', tableName: 'customers', lookupKey: 'customer_id', joinField: 'id' } },
      // stage overrides the destination schema; load and reconcile inherit it.
      { type: 'stage', name: 'Stage', config: { connectionId: 'D2026A00002', schemaName: 'staging', tableName: 'orders_stage' } },
      { type: 'load', name: 'Load', config: { connectionId: 'D2026A00002', schemaName: 'reporting', tableName: 'orders' } },
      {
        type: 'reconcile',
        name: 'Reconcile',
        config: {
          connectionId: 'D2026A00002',
          schemaName: 'reporting',
          mappingSource: 'default',
          compareRowCounts: true,
          checkFieldCompleteness: true,
          screenMapEnabled: true,
        },
      },
    ]);
  });

  it('lets a load step override the destination connection and schema; no destination schema → none inherited', () => {
    const body = {
      ...fullPayload(),
      destination: { connectionId: 'D2026A00002' },
      steps: [
        { type: 'load', config: { tableName: 'a', connectionId: 'D2026A00009', schemaName: 'other' } },
        { type: 'load', name: '  ', config: { tableName: 'b' } },
        { type: 'reconcile', name: 'Check counts', config: { mappingSource: 'custom', screenMapEnabled: false } },
      ],
    };
    const steps = resolveSteps(spec(body));
    expect(steps.slice(1)).toEqual([
      { type: 'load', name: 'Load', config: { connectionId: 'D2026A00009', schemaName: 'other', tableName: 'a' } },
      { type: 'load', name: 'Load', config: { connectionId: 'D2026A00002', tableName: 'b' } },
      {
        type: 'reconcile',
        name: 'Check counts',
        config: { connectionId: 'D2026A00002', mappingSource: 'custom', screenMapEnabled: false, compareRowCounts: true, checkFieldCompleteness: true },
      },
    ]);
  });

  it('a database source without config gives a source step with only its connection', () => {
    const steps = resolveSteps(spec({ ...fullPayload(), source: { connectionId: 'D2026A00007', type: 'database' }, steps: [] }));
    expect(steps).toEqual([{ type: 'source', name: 'Source', config: { connectionId: 'D2026A00007' } }]);
  });

  it('labels every step type as the spec lists them', () => {
    expect(STEP_LABELS).toEqual({
      source: 'Source',
      transform: 'Transform',
      validate: 'Validate',
      quality: 'Data Quality',
      db_lookup: 'DB Lookup',
      stage: 'Stage',
      load: 'Load',
      reconcile: 'Reconcile',
    });
  });
});
