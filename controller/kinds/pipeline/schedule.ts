import { createRequire } from 'node:module';
import type { CronExpression as Expression, CronExpressionParser as Parser, CronFieldCollection as Fields } from 'cron-parser';
import type { PipelineSchedule } from './types.ts';

const require = createRequire(import.meta.url);
let library: typeof import('cron-parser') | undefined;

/** cron-parser (and its date library, ~8 MB) is loaded on first use: most controllers schedule nothing. */
function cronLibrary(): typeof import('cron-parser') {
  library ??= require('cron-parser') as typeof import('cron-parser');
  return library;
}

function cron(): typeof Parser {
  return cronLibrary().CronExpressionParser;
}

/** BI_SCHEDULE_MIN_INTERVAL's default: a schedule fires at most once a minute (docs/contract/design.md, fair slots). */
export { DEFAULT_SCHEDULE_MIN_INTERVAL_MS } from '../../config.ts';

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

const SECOND = 1000;
/** Fire days looked at for two consecutive ones: five years hold a 29 February. */
const DAYS_LOOKED_AT = 5 * 366;
const FIXED_FROM = new Date(Date.UTC(2026, 0, 1));

/**
 * The shortest time between two consecutive fires of a schedule, in ms, when it is shorter
 * than `limitMs`; undefined otherwise, and when it fires at most once (`once`) or the cron
 * expression does not parse. `monthly` counts as 28 days. (Whether it is enabled is not asked:
 * a schedule may be enabled later.)
 */
export function scheduleGapBelow(schedule: { frequency?: string; cronExpression?: string } | null | undefined, limitMs: number): number | undefined {
  let gap: number | undefined;
  switch (schedule?.frequency) {
    case 'hourly':
    case 'daily':
    case 'weekly':
      gap = FIXED_PERIODS[schedule.frequency];
      break;
    case 'monthly':
      gap = 28 * DAY;
      break;
    case 'cron':
      return cronGapBelow(schedule.cronExpression ?? '', limitMs);
  }
  return gap !== undefined && gap < limitMs ? gap : undefined;
}

/**
 * The shortest gap between consecutive fires of a cron expression (UTC) when it is shorter than
 * `limitMs`. Every fire day has the same times of day (the product of the second, minute and
 * hour fields), so the gaps within a day are exact; the gap across midnight counts only when
 * two consecutive days both fire, which the expression's own day fields answer over five years
 * from a fixed date (looked at only when that gap would be under the limit: it is slow).
 */
export function cronGapBelow(expression: string, limitMs: number): number | undefined {
  let fields: Fields;
  try {
    fields = cron().parse(expression.trim(), { tz: 'UTC' }).fields;
  } catch {
    return undefined;
  }
  const sorted = (values: readonly unknown[]): number[] => values.map(Number).sort((a, b) => a - b);
  const [seconds, minutes, hours] = [sorted(fields.second.values), sorted(fields.minute.values), sorted(fields.hour.values)];
  if (!seconds.length || !minutes.length || !hours.length) return undefined;
  // Gaps within a minute, from one minute to the next, from one hour to the next (in seconds).
  const closest = (values: number[], unit: number, carried: number): number =>
    values.slice(1).reduce((min, v, i) => Math.min(min, (v - values[i]) * unit - carried), Number.POSITIVE_INFINITY);
  const minuteSpan = seconds[seconds.length - 1] - seconds[0];
  const hourSpan = minutes[minutes.length - 1] * 60 + seconds[seconds.length - 1] - (minutes[0] * 60 + seconds[0]);
  let gap = Math.min(closest(seconds, 1, 0), closest(minutes, 60, minuteSpan), closest(hours, 3600, hourSpan)) * SECOND;
  const first = (hours[0] * 3600 + minutes[0] * 60 + seconds[0]) * SECOND;
  const previous = (hours[hours.length - 1] * 3600 + minutes[minutes.length - 1] * 60 + seconds[seconds.length - 1]) * SECOND;
  const overMidnight = DAY - previous + first;
  if (overMidnight < gap && overMidnight < limitMs) gap = Math.min(gap, overMidnight + (fireDayGap(fields) - 1) * DAY);
  return gap < limitMs ? gap : undefined;
}

/** The fewest days between two fire days (1 = some consecutive days both fire). */
function fireDayGap(fields: Fields): number {
  const { CronExpression, CronFieldCollection } = cronLibrary();
  const days: Expression = new CronExpression(CronFieldCollection.from(fields, { second: [0], minute: [0], hour: [0] }), {
    tz: 'UTC',
    currentDate: new Date(FIXED_FROM.getTime() - 1),
  });
  const end = FIXED_FROM.getTime() + DAYS_LOOKED_AT * DAY;
  let fewest = Number.POSITIVE_INFINITY;
  let previous: number | undefined;
  try {
    for (let at = days.next().getTime(); at < end; at = days.next().getTime()) {
      if (previous !== undefined) fewest = Math.min(fewest, Math.round((at - previous) / DAY));
      if (fewest === 1) return 1;
      previous = at;
    }
  } catch {
    // No fire day left in cron-parser's range: the days seen so far are all there is.
  }
  return Number.isFinite(fewest) ? fewest : DAYS_LOOKED_AT;
}

/** `90000` → `1m30s`; `86400000` → `1d`. */
export function formatInterval(ms: number): string {
  const parts: string[] = [];
  let rest = Math.round(ms / SECOND);
  for (const [unit, size] of [['d', 86_400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.join('') || `${ms}ms`;
}
