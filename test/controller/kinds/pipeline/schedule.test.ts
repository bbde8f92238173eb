import { describe, expect, it } from 'vitest';
import { cronGapBelow, cronProblem, formatInterval, nextRunAt, scheduleGapBelow, scheduleStart } from '../../../../controller/kinds/pipeline/schedule.ts';
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

describe('schedule minimum gap (BI_SCHEDULE_MIN_INTERVAL)', () => {
  const S = 1000;
  const M = 60 * S;
  const H = 60 * M;
  const D = 24 * H;
  // The exact gap, whatever it is (a limit above every one).
  const cronMinGapMs = (e: string) => cronGapBelow(e, 365 * D);
  const scheduleMinGapMs = (s: Parameters<typeof scheduleGapBelow>[0]) => scheduleGapBelow(s, 365 * D);
  it('cron: the shortest gap between consecutive fires, seconds included', () => {
    expect(cronMinGapMs('* * * * * *')).toBe(S);
    expect(cronMinGapMs('*/30 * * * * *')).toBe(30 * S);
    expect(cronMinGapMs('15 * * * * *')).toBe(M);
    expect(cronMinGapMs('* * * * *')).toBe(M);
    expect(cronMinGapMs('*/15 * * * *')).toBe(15 * M);
    expect(cronMinGapMs('0 2 * * 1-5')).toBe(D);
    expect(cronMinGapMs('@daily')).toBe(D);
    expect(cronMinGapMs('@weekly')).toBe(7 * D);
    // Unevenly spaced values: the closest pair counts.
    expect(cronMinGapMs('0 0,1,30 * * * *')).toBe(M);
    expect(cronMinGapMs('0,50 0 3 * * *')).toBe(50 * S);
  });

  it('cron: across midnight only when two consecutive days both fire', () => {
    expect(cronMinGapMs('59 23,0 * * *')).toBe(60 * M); // 23:59 → 00:59 the next day
    expect(cronMinGapMs('0,59 0,23 * * *')).toBe(M); // 23:59 → 00:00 the next day
    expect(cronMinGapMs('0 0,23 1 * *')).toBe(23 * H); // day 1 only: 23:00 → next month's 00:00 is far
    expect(cronMinGapMs('0 0,23 1,2 * *')).toBe(H); // 1st 23:00 → 2nd 00:00
    expect(cronMinGapMs('0 0,23 28 2 *')).toBe(23 * H);
    expect(cronMinGapMs('0 0,23 29 2 *')).toBe(23 * H); // once in four years
    expect(cronMinGapMs('not cron')).toBeUndefined();
  });

  it('fixed frequencies: their period; once: none', () => {
    expect(scheduleMinGapMs({ frequency: 'hourly' })).toBe(H);
    expect(scheduleMinGapMs({ frequency: 'daily' })).toBe(D);
    expect(scheduleMinGapMs({ frequency: 'monthly' })).toBe(28 * D);
    expect(scheduleMinGapMs({ frequency: 'once' })).toBeUndefined();
    expect(scheduleMinGapMs({ frequency: 'cron', cronExpression: '*/10 * * * * *' })).toBe(10 * S);
    expect(scheduleMinGapMs(undefined)).toBeUndefined();
  });

  it('answers only gaps under the limit', () => {
    expect(cronGapBelow('*/30 * * * * *', M)).toBe(30 * S);
    expect(cronGapBelow('* * * * *', M)).toBeUndefined();
    expect(cronGapBelow('0,59 0,23 * * *', M)).toBeUndefined();
    expect(cronGapBelow('59 59 23 * * *', M)).toBeUndefined();
    expect(cronGapBelow('58,59 59 23 * * *', M)).toBe(S);
    expect(cronGapBelow('59 59 23,0 * * *', 2 * H)).toBe(H); // 23:59:59 → 00:59:59 the next day
    expect(cronGapBelow('0,59 0,59 0,23 * * *', M)).toBe(S); // 23:59:59 → 00:00:00 (59 s within a day)
    expect(scheduleGapBelow({ frequency: 'hourly' }, 2 * H)).toBe(H);
    expect(scheduleGapBelow({ frequency: 'hourly' }, M)).toBeUndefined();
  });

  it('formats intervals for messages', () => {
    expect([formatInterval(30 * S), formatInterval(M), formatInterval(90 * S), formatInterval(D + H), formatInterval(250)]).toEqual(['30s', '1m', '1m30s', '1d1h', '250ms']);
  });
});
