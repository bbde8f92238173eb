import { describe, expect, it } from 'vitest';
import { cronProblem, nextRunAt, scheduleStart } from '../../../../controller/kinds/pipeline/schedule.ts';
import type { PipelineSchedule } from '../../../../controller/kinds/pipeline/types.ts';

const at = (iso: string) => new Date(iso);
const next = (s: Partial<PipelineSchedule>, now: string, createdAt?: string) =>
  nextRunAt({ isEnabled: true, ...s }, at(now), createdAt ? at(createdAt) : undefined)?.toISOString() ?? null;

describe('schedule next run (UTC, injected clock)', () => {
  it('is null when the schedule is absent, disabled or has no frequency', () => {
    expect(nextRunAt(undefined, at('2026-03-01T10:00:00Z'))).toBeNull();
    expect(nextRunAt(null, at('2026-03-01T10:00:00Z'))).toBeNull();
    expect(nextRunAt({ isEnabled: false, frequency: 'daily' }, at('2026-03-01T10:00:00Z'))).toBeNull();
    expect(nextRunAt({ isEnabled: true }, at('2026-03-01T10:00:00Z'))).toBeNull();
  });

  it('once: the start while it is ahead, then never', () => {
    const s = { frequency: 'once' as const, startDate: '2026-03-02', startTime: '08:30' };
    expect(next(s, '2026-03-01T10:00:00Z')).toBe('2026-03-02T08:30:00.000Z');
    expect(next(s, '2026-03-02T08:30:00Z')).toBeNull();
    expect(next(s, '2026-04-01T00:00:00Z')).toBeNull();
  });

  it('hourly: every hour from the start, at the start minute', () => {
    const s = { frequency: 'hourly' as const, startDate: '2026-01-01', startTime: '00:15' };
    expect(next(s, '2026-03-01T10:00:00Z')).toBe('2026-03-01T10:15:00.000Z');
    expect(next(s, '2026-03-01T10:15:00Z')).toBe('2026-03-01T11:15:00.000Z'); // strictly after now
    expect(next(s, '2025-12-31T23:00:00Z')).toBe('2026-01-01T00:15:00.000Z'); // before the start: the start
  });

  it('daily: at the start time each day', () => {
    const s = { frequency: 'daily' as const, startDate: '2026-01-01', startTime: '02:00' };
    expect(next(s, '2026-03-01T10:00:00Z')).toBe('2026-03-02T02:00:00.000Z');
    expect(next(s, '2026-03-01T01:59:59.999Z')).toBe('2026-03-01T02:00:00.000Z');
  });

  it('weekly: on the start date\'s weekday', () => {
    // 2026-01-05 is a Monday; 2026-03-01 a Sunday.
    const s = { frequency: 'weekly' as const, startDate: '2026-01-05', startTime: '06:00' };
    expect(next(s, '2026-03-01T10:00:00Z')).toBe('2026-03-02T06:00:00.000Z');
    expect(next(s, '2026-03-02T06:00:01Z')).toBe('2026-03-09T06:00:00.000Z');
  });

  it('monthly: on the start day of month, clamped to the last day of shorter months', () => {
    const s = { frequency: 'monthly' as const, startDate: '2026-01-31', startTime: '12:00' };
    expect(next(s, '2026-01-15T00:00:00Z')).toBe('2026-01-31T12:00:00.000Z');
    expect(next(s, '2026-02-01T00:00:00Z')).toBe('2026-02-28T12:00:00.000Z');
    expect(next(s, '2026-03-01T10:00:00Z')).toBe('2026-03-31T12:00:00.000Z');
    expect(next(s, '2026-04-30T12:00:00Z')).toBe('2026-05-31T12:00:00.000Z');
    expect(next(s, '2027-12-31T12:00:00Z')).toBe('2028-01-31T12:00:00.000Z');
    expect(next({ frequency: 'monthly', startDate: '2024-01-31' }, '2024-02-10T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
  });

  it('cron: per its expression, never before the start', () => {
    expect(next({ frequency: 'cron', cronExpression: '*/15 * * * *' }, '2026-03-01T10:07:00Z')).toBe('2026-03-01T10:15:00.000Z');
    expect(next({ frequency: 'cron', cronExpression: '0 2 * * 1-5' }, '2026-03-01T10:00:00Z')).toBe('2026-03-02T02:00:00.000Z');
    expect(next({ frequency: 'cron', cronExpression: '0 2 * * *', startDate: '2026-06-01' }, '2026-03-01T10:00:00Z')).toBe('2026-06-01T02:00:00.000Z');
    expect(next({ frequency: 'cron', cronExpression: '0 0 * * *', startDate: '2026-06-01' }, '2026-03-01T10:00:00Z')).toBe('2026-06-01T00:00:00.000Z');
    expect(next({ frequency: 'cron', cronExpression: 'not cron at all' }, '2026-03-01T10:00:00Z')).toBeNull();
  });

  it('without a start date the day the pipeline was created anchors the schedule; without a time, midnight', () => {
    expect(scheduleStart({ isEnabled: true }, at('2026-03-01T10:00:00Z')).toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(next({ frequency: 'daily', startTime: '02:00' }, '2026-03-05T10:00:00Z', '2026-03-01T10:00:00Z')).toBe('2026-03-06T02:00:00.000Z');
    expect(next({ frequency: 'weekly' }, '2026-03-05T10:00:00Z', '2026-03-01T10:00:00Z')).toBe('2026-03-08T00:00:00.000Z');
    expect(next({ frequency: 'once', startTime: '23:00' }, '2026-03-01T10:00:00Z', '2026-03-01T09:00:00Z')).toBe('2026-03-01T23:00:00.000Z');
  });

  it('cronProblem accepts 5 and 6 fields and @aliases, refuses the rest with a reason', () => {
    expect(cronProblem('0 2 * * *')).toBeUndefined();
    expect(cronProblem('0 0 2 * * *')).toBeUndefined();
    expect(cronProblem('@weekly')).toBeUndefined();
    expect(cronProblem('0 2 * *')).toMatch(/must have 5 fields/);
    expect(cronProblem('0 0 30 2 *')).toBe('Invalid explicit day of month definition');
    expect(cronProblem('1 2 3 4 5 6 7')).toMatch(/got 7$/);
  });
});
