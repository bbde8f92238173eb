import { describe, expect, it } from 'vitest';
import { NO_NAME, semanticProblems, validatePipelinePayload } from '../../../../controller/kinds/pipeline/validate.ts';
import { fullPayload, minimalPayload } from './fixtures.ts';
import { testSchemas } from '../../../helpers/schemas.ts';

const schemas = testSchemas();

function messageOf(body: unknown): string {
  const r = validatePipelinePayload(schemas, body);
  if (r.ok) throw new Error('expected the payload to be refused');
  return r.message;
}

type Payload = ReturnType<typeof fullPayload> & { steps: { type: string; config: Record<string, unknown> }[] };
function withStep(step: unknown): Record<string, unknown> {
  return { ...minimalPayload(), steps: [step] };
}

describe('pipeline payload validation (docs/contract/api.md §2.5)', () => {
  it('accepts the full and the minimal payload and fills in the schema defaults on a copy', () => {
    const body = fullPayload();
    const r = validatePipelinePayload(schemas, body);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.spec.destination).toEqual({ connectionId: 'D2026A00002', schemaName: 'reporting', type: 'database', vendor: 'POSTGRESQL' });
    expect(r.spec.source.config).toEqual({ endpoint: 'https://shop.example.com/orders', paginated: true, method: 'GET' });
    expect(r.spec.steps[7].config).toEqual({ mappingSource: 'default', compareRowCounts: true, checkFieldCompleteness: true, screenMapEnabled: true });
    expect(body).toEqual(fullPayload()); // the caller's object is left as sent
    const min = validatePipelinePayload(schemas, minimalPayload());
    expect(min.ok).toBe(true);
    if (min.ok) expect(min.spec.schedule).toBeUndefined();
    const sched = validatePipelinePayload(schemas, { ...minimalPayload(), schedule: {} });
    expect(sched.ok && sched.spec.schedule).toEqual({ isEnabled: false });
  });

  it('answers a missing name with exactly the spec sentence, alone or first', () => {
    const { name: _drop, ...noName } = minimalPayload();
    expect(messageOf(noName)).toBe(NO_NAME);
    expect(NO_NAME).toBe('Pipeline JSON must include a name.');
    expect(messageOf({ ...minimalPayload(), name: '   ' })).toBe(NO_NAME);
    expect(messageOf({})).toBe('Pipeline JSON must include a name.; source is required; destination is required; steps is required');
    expect(messageOf({ steps: 'x', source: {} })).toBe(
      'Pipeline JSON must include a name.; destination is required; source.connectionId is required; source.type is required; steps must be array',
    );
    expect(messageOf(null)).toBe('Pipeline JSON must include a name.; Pipeline JSON must be an object.');
    expect(messageOf([1])).toBe('Pipeline JSON must include a name.; Pipeline JSON must be an object.');
    expect(messageOf({ ...minimalPayload(), name: 7 })).toBe('name must be string');
  });

  it('checks source and destination', () => {
    expect(messageOf({ ...minimalPayload(), source: { type: 'ftp' } })).toBe(
      'source.connectionId is required; source.type must be one of api, database, file, s3',
    );
    expect(messageOf({ ...minimalPayload(), source: { connectionId: '', type: 'file' } })).toBe('source.connectionId must not be empty');
    expect(messageOf({ ...minimalPayload(), destination: { type: 'warehouse', vendor: 5 } })).toBe(
      'destination.connectionId is required; destination.type must be database (the only destination type in this version); destination.vendor must be string',
    );
    expect(messageOf({ ...minimalPayload(), source: { connectionId: 'D', type: 'api', config: { method: 1, paginated: 'yes' } } })).toBe(
      'source.config.method must be string; source.config.paginated must be boolean',
    );
  });

  it('checks every step: type enum and config required', () => {
    expect(messageOf(withStep({ type: 'extract' }))).toBe(
      'steps[0].config is required; steps[0].type must be one of source, transform, validate, quality, db_lookup, stage, load, reconcile',
    );
    expect(messageOf(withStep({ config: {} }))).toBe('steps[0].type is required');
    expect(messageOf(withStep({ type: 'load', config: [] }))).toBe('steps[0].config must be object');
    expect(messageOf({ ...minimalPayload(), steps: [{ type: 'load', config: { tableName: 't' }, name: 3 }] })).toBe('steps[0].name must be string');
  });

  it('checks the per-type requirements of the table in 2.5', () => {
    expect(messageOf(withStep({ type: 'db_lookup', config: { selectFields: 'a,b' } }))).toBe(
      'steps[0].config.connectionId is required; steps[0].config.tableName is required; steps[0].config.lookupKey is required; steps[0].config.joinField is required',
    );
    expect(messageOf(withStep({ type: 'stage', config: { schemaName: 's' } }))).toBe('steps[0].config.tableName is required');
    expect(messageOf(withStep({ type: 'load', config: {} }))).toBe('steps[0].config.tableName is required');
    expect(messageOf(withStep({ type: 'load', config: { tableName: ' ' } }))).toBe('steps[0].config.tableName must not be empty');
    expect(messageOf(withStep({ type: 'transform', config: { fieldMappings: [{ source: 'a' }, { target: 'b' }, { source: 'c', target: 'd' }] } }))).toBe(
      'steps[0].config.fieldMappings[0].target is required; steps[0].config.fieldMappings[1].source is required',
    );
    expect(messageOf(withStep({ type: 'reconcile', config: { mappingSource: 'file', compareRowCounts: 'no' } }))).toBe(
      'steps[0].config.mappingSource must be one of default, custom; steps[0].config.compareRowCounts must be boolean',
    );
    expect(messageOf(withStep({ type: 'source', config: { connectionId: '' } }))).toBe('steps[0].config.connectionId must not be empty');
  });

  it('checks rule enums with field and rule required for transform, validate and quality', () => {
    expect(messageOf(withStep({ type: 'transform', config: { rules: [{ rule: 'to_integer' }, { field: 'a' }, { field: 'a', rule: 'reverse' }] } }))).toBe(
      'steps[0].config.rules[0].field is required; steps[0].config.rules[1].rule is required; ' +
        'steps[0].config.rules[2].rule must be one of to_integer, to_string, to_decimal, to_date, pad_trim, uppercase, lowercase, trim',
    );
    expect(messageOf(withStep({ type: 'validate', config: { rules: [{ field: 'a', rule: 'to_integer' }] } }))).toBe(
      'steps[0].config.rules[0].rule must be one of not_null, regex, range, min_length, max_length, email',
    );
    expect(messageOf(withStep({ type: 'quality', config: { rules: [{ field: 'a', rule: 'not_null' }] } }))).toBe(
      'steps[0].config.rules[0].rule must be one of deduplicate, outlier_detection, completeness_check',
    );
  });

  it('checks rule params: pad_trim length and pad character, regex pattern, deduplicate keys, outlier method and threshold', () => {
    const rules = (type: string, ...r: unknown[]) => withStep({ type, config: { rules: r } });
    expect(messageOf(rules('transform', { field: 'a', rule: 'pad_trim' }))).toBe('steps[0].config.rules[0].params is required');
    expect(messageOf(rules('transform', { field: 'a', rule: 'pad_trim', params: { length: 0, padChar: '00' } }))).toBe(
      'steps[0].config.rules[0].params.length must be at least 1; steps[0].config.rules[0].params.padChar must be one character',
    );
    expect(messageOf(rules('transform', { field: 'a', rule: 'pad_trim', params: {} }))).toBe(
      'steps[0].config.rules[0].params.length is required; steps[0].config.rules[0].params.padChar is required',
    );
    expect(messageOf(rules('validate', { field: 'a', rule: 'regex', params: {} }))).toBe('steps[0].config.rules[0].params.pattern is required');
    expect(messageOf(rules('validate', { field: 'a', rule: 'regex', params: { pattern: '([a-z' } }))).toBe(
      'steps[0].config.rules[0].params.pattern is not a valid regular expression: Invalid regular expression: /([a-z/: Unterminated character class',
    );
    expect(messageOf(rules('quality', { field: 'a', rule: 'deduplicate' }))).toBe('steps[0].config.rules[0].params is required');
    expect(messageOf(rules('quality', { field: 'a', rule: 'deduplicate', params: { keys: [] } }))).toBe(
      'steps[0].config.rules[0].params.keys must list at least one key field',
    );
    expect(messageOf(rules('quality', { field: 'a', rule: 'deduplicate', params: { keys: 'a' } }))).toBe('steps[0].config.rules[0].params.keys must be array');
    expect(messageOf(rules('quality', { field: 'a', rule: 'outlier_detection', params: { threshold: '3' } }))).toBe(
      'steps[0].config.rules[0].params.method is required; steps[0].config.rules[0].params.threshold must be number',
    );
    // Rules without params requirements pass without params.
    expect(validatePipelinePayload(schemas, rules('validate', { field: 'a', rule: 'email' })).ok).toBe(true);
  });

  it('checks the schedule: frequency enum, cron expression required and parsed, ISO start date, HH:MM start time', () => {
    const sched = (s: unknown) => ({ ...minimalPayload(), schedule: s });
    expect(messageOf(sched({ frequency: 'yearly' }))).toBe('schedule.frequency must be one of once, hourly, daily, weekly, monthly, cron');
    expect(messageOf(sched({ frequency: 'cron' }))).toBe('schedule.cronExpression is required');
    expect(messageOf(sched({ frequency: 'cron', cronExpression: ' ' }))).toBe('schedule.cronExpression must not be empty');
    expect(messageOf(sched({ frequency: 'cron', cronExpression: '61 * * * *' }))).toBe(
      'schedule.cronExpression is not a valid cron expression: Constraint error, got value 61 expected range 0-59',
    );
    expect(messageOf(sched({ frequency: 'cron', cronExpression: '* * * *' }))).toBe(
      'schedule.cronExpression is not a valid cron expression: must have 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds, got 4',
    );
    expect(messageOf(sched({ isEnabled: true }))).toBe('schedule.frequency is required');
    expect(messageOf(sched({ isEnabled: 'yes', startDate: '2026-02-30', startTime: '7:5' }))).toBe(
      'schedule.isEnabled must be boolean; schedule.startDate must be an ISO date (YYYY-MM-DD); schedule.startTime must be a time HH:MM (00:00 to 23:59)',
    );
    expect(messageOf(sched({ startDate: '2026-01-01T00:00:00Z', startTime: '24:00' }))).toBe(
      'schedule.startDate must be an ISO date (YYYY-MM-DD); schedule.startTime must be a time HH:MM (00:00 to 23:59)',
    );
    for (const ok of [
      { frequency: 'cron', cronExpression: '0 2 * * 1-5' },
      { frequency: 'cron', cronExpression: '30 0 2 * * *' },
      { frequency: 'cron', cronExpression: '@daily' },
      { isEnabled: true, frequency: 'weekly', startDate: '2024-02-29', startTime: '23:59' },
      { frequency: 'once' },
    ]) {
      expect(validatePipelinePayload(schemas, sched(ok)).ok, JSON.stringify(ok)).toBe(true);
    }
  });

  it('refuses a schedule firing more often than BI_SCHEDULE_MIN_INTERVAL (default 1m), naming the field', () => {
    const sched = (s: unknown) => ({ ...minimalPayload(), schedule: { isEnabled: true, ...(s as object) } });
    expect(messageOf(sched({ frequency: 'cron', cronExpression: '* * * * * *' }))).toBe(
      'schedule.cronExpression fires every 1s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)',
    );
    expect(messageOf(sched({ frequency: 'cron', cronExpression: '*/30 * * * * *' }))).toBe(
      'schedule.cronExpression fires every 30s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)',
    );
    // Disabled schedules too: enabling one later must not bypass the rule.
    expect(messageOf({ ...minimalPayload(), schedule: { isEnabled: false, frequency: 'cron', cronExpression: '0,30 * * * * *' } })).toBe(
      'schedule.cronExpression fires every 30s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)',
    );
    for (const ok of ['* * * * *', '15 * * * * *', '0 */5 * * * *']) {
      expect(validatePipelinePayload(schemas, sched({ frequency: 'cron', cronExpression: ok })).ok, ok).toBe(true);
    }
    // A longer minimum: every 5 minutes is too often for 10m, hourly too often for 2h.
    const tenMinutes = { scheduleMinIntervalMs: 600_000 };
    const r = validatePipelinePayload(schemas, sched({ frequency: 'cron', cronExpression: '*/5 * * * *' }), tenMinutes);
    expect(r.ok ? '' : r.message).toBe('schedule.cronExpression fires every 5m, more often than once per 10m (BI_SCHEDULE_MIN_INTERVAL)');
    const h = validatePipelinePayload(schemas, sched({ frequency: 'hourly' }), { scheduleMinIntervalMs: 7_200_000 });
    expect(h.ok ? '' : h.message).toBe('schedule.frequency fires every 1h, more often than once per 2h (BI_SCHEDULE_MIN_INTERVAL)');
    expect(validatePipelinePayload(schemas, sched({ frequency: 'cron', cronExpression: '*/10 * * * * *' }), { scheduleMinIntervalMs: 5000 }).ok).toBe(true);
    expect(semanticProblems({ schedule: { frequency: 'cron', cronExpression: '*/10 * * * * *' } }, 'spec')).toEqual([
      { path: 'spec.schedule.cronExpression', message: 'spec.schedule.cronExpression fires every 10s, more often than once per 1m (BI_SCHEDULE_MIN_INTERVAL)' },
    ]);
  });

  it('lists every problem of a payload at once, in one message joined by "; "', () => {
    const body = fullPayload() as Payload;
    delete (body as Record<string, unknown>).name;
    (body.source as Record<string, unknown>).type = 'ftp';
    body.steps[4].config = {};
    (body.schedule as Record<string, unknown>).frequency = 'cron';
    expect(messageOf(body)).toBe(
      'Pipeline JSON must include a name.; source.type must be one of api, database, file, s3; ' +
        'steps[4].config.connectionId is required; steps[4].config.tableName is required; steps[4].config.lookupKey is required; steps[4].config.joinField is required; ' +
        'schedule.cronExpression is required',
    );
  });

  it('semantic checks carry the manifest prefix and tolerate malformed input', () => {
    expect(semanticProblems({ steps: [{ type: 'validate', config: { rules: [{ rule: 'regex', params: { pattern: '(' } }] } }] }, 'spec')).toEqual([
      { path: 'spec.steps[0].config.rules[0].params.pattern', message: expect.stringMatching(/^spec\.steps\[0\]\.config\.rules\[0\]\.params\.pattern is not a valid regular expression: /) },
    ]);
    expect(semanticProblems({ steps: 'x', schedule: 5 })).toEqual([]);
    expect(semanticProblems(null)).toEqual([]);
  });
});
