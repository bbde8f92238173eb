import { createRequire } from 'node:module';
import type { CronExpressionParser as Parser } from 'cron-parser';
import type { PipelineSchedule } from './types.ts';

const require = createRequire(import.meta.url);
let parser: typeof Parser | undefined;

/** cron-parser (and its date library, ~8 MB) is loaded on first use: most controllers schedule nothing. */
function cron(): typeof Parser {
  parser ??= (require('cron-parser') as typeof import('cron-parser')).CronExpressionParser;
  return parser;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const FIXED_PERIODS: Record<string, number> = { hourly: HOUR, daily: DAY, weekly: 7 * DAY };

/**
 * Parses a cron expression the way the scheduler will: five fields (minute hour day-of-month
 * month day-of-week), six with seconds first, or an `@alias` such as `@daily`. Returns the
 * reason it is refused, or undefined when it is fine. (cron-parser alone accepts fewer fields.)
 */
export function cronProblem(expression: string): string | undefined {
  const trimmed = expression.trim();
  const fields = trimmed.split(/\s+/).length;
  if (!trimmed.startsWith('@') && fields !== 5 && fields !== 6) {
    return `must have 5 fields (minute hour day-of-month month day-of-week) or 6 with seconds, got ${trimmed ? fields : 0}`;
  }
  try {
    cron().parse(trimmed, { tz: 'UTC' });
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

/**
 * When the schedule's first run is due: `startDate` at `startTime`, in UTC. Without a
 * `startDate` the day the pipeline was created is used; without a `startTime`, midnight.
 */
export function scheduleStart(schedule: PipelineSchedule, createdAt: Date): Date {
  const [hh, mm] = (schedule.startTime ?? '00:00').split(':').map(Number);
  if (schedule.startDate) {
    const [y, m, d] = schedule.startDate.split('-').map(Number);
    return new Date(Date.UTC(y, m - 1, d, hh, mm));
  }
  return new Date(Date.UTC(createdAt.getUTCFullYear(), createdAt.getUTCMonth(), createdAt.getUTCDate(), hh, mm));
}

/**
 * The next run strictly after `now` of an enabled schedule, or null (disabled, no frequency,
 * a `once` run already past, a cron expression that never fires again). Times are UTC.
 * `hourly`, `daily` and `weekly` repeat from the start; `monthly` keeps the start's day of
 * month (the last day in shorter months); `cron` fires per its expression from the start on.
 */
export function nextRunAt(schedule: PipelineSchedule | null | undefined, now: Date, createdAt: Date = now): Date | null {
  if (!schedule?.isEnabled || !schedule.frequency) return null;
  const start = scheduleStart(schedule, createdAt);
  const t = now.getTime();
  switch (schedule.frequency) {
    case 'once':
      return start.getTime() > t ? start : null;
    case 'hourly':
    case 'daily':
    case 'weekly': {
      const period = FIXED_PERIODS[schedule.frequency];
      if (start.getTime() > t) return start;
      const k = Math.floor((t - start.getTime()) / period) + 1;
      return new Date(start.getTime() + k * period);
    }
    case 'monthly':
      return nextMonthly(start, now);
    case 'cron':
      return nextCron(schedule.cronExpression ?? '', start, now);
  }
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

function nextMonthly(start: Date, now: Date): Date {
  if (start.getTime() > now.getTime()) return start;
  const day = start.getUTCDate();
  const at = (k: number): Date => {
    const y = start.getUTCFullYear() + Math.floor((start.getUTCMonth() + k) / 12);
    const m = (start.getUTCMonth() + k) % 12;
    return new Date(Date.UTC(y, m, Math.min(day, daysInMonth(y, m)), start.getUTCHours(), start.getUTCMinutes()));
  };
  // Months between start and now, less one: the candidate before now is never skipped.
  let k = Math.max(0, (now.getUTCFullYear() - start.getUTCFullYear()) * 12 + now.getUTCMonth() - start.getUTCMonth() - 1);
  while (at(k).getTime() <= now.getTime()) k++;
  return at(k);
}

function nextCron(expression: string, start: Date, now: Date): Date | null {
  // A run at exactly the start counts; before the start, nothing fires.
  const from = start.getTime() > now.getTime() ? new Date(start.getTime() - 1) : now;
  try {
    return cron().parse(expression.trim(), { currentDate: from, tz: 'UTC' }).next().toDate();
  } catch {
    return null;
  }
}
