// Formatting shared by the operations pages (pipelines, runs, connections, users).
import { fmtDate, h } from '../dom.js';

/** 850 ms · 12.3 s · 4 min 05 s · 2 h 03 min; '—' when unknown. */
/** @param {number | null | undefined} ms */
export function fmtDuration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${String(Math.floor(s % 60)).padStart(2, '0')} s`;
  return `${Math.floor(m / 60)} h ${String(m % 60).padStart(2, '0')} min`;
}

/** "3 min ago" / "in 12 min", relative to now. */
/**
 * @param {string | null | undefined} iso
 * @param {number} [now]
 */
export function fromNow(iso, now = Date.now()) {
  if (!iso) return '—';
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return String(iso);
  const diff = Math.round((t - now) / 1000);
  const abs = Math.abs(diff);
  const [n, unit] = abs < 45 ? [0, ''] : abs < 3600 ? [Math.round(abs / 60), 'min'] : abs < 86400 ? [Math.round(abs / 3600), 'h'] : [Math.round(abs / 86400), 'd'];
  if (n === 0) return diff > 0 ? 'in a moment' : 'just now';
  return diff > 0 ? `in ${n} ${unit}` : `${n} ${unit} ago`;
}

/** A time shown relative, with the exact UTC time as its title and machine-readable datetime. */
/** @param {string | null | undefined} iso */
export function when(iso) {
  if (!iso) return h('span', { class: 'muted' }, '—');
  return h('time', { datetime: iso, title: fmtDate(iso) }, fromNow(iso));
}

/** @param {unknown} n */
export const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : '—');

/** A schedule in words: "Hourly from 10:15", "Daily at 06:00", "Cron 0 6 * * *", "Manual". */
/** @param {{frequency?: string, startTime?: string, startDate?: string, cronExpression?: string} | null | undefined} s */
export function scheduleText(s) {
  if (!s) return 'Manual (no schedule)';
  const at = s.startTime ? ` at ${s.startTime}` : '';
  switch (s.frequency) {
    case 'cron':
      return `Cron ${s.cronExpression ?? ''}`.trim();
    case 'once':
      return `Once${s.startDate ? ` on ${s.startDate}` : ''}${at}`;
    case 'hourly':
      return `Hourly${s.startTime ? ` from ${s.startTime}` : ''}`;
    case undefined:
      return 'Manual';
    default:
      return `${s.frequency[0].toUpperCase()}${s.frequency.slice(1)}${at}`;
  }
}

/** The few settings that say what a step does: table, mode, rule counts… at most `max` items. */
/**
 * @param {Record<string, unknown> | null | undefined} config
 * @param {number} [max]
 */
export function stepSettings(config, max = 4) {
  /** @type {string[]} */
  const items = [];
  for (const [k, v] of Object.entries(config ?? {})) {
    if (v === null || v === undefined || v === '') continue;
    if (Array.isArray(v)) {
      const names = v.map((/** @type {{field?: string, rule?: string, source?: string, target?: string} | string | number | null} */ x) => (x && typeof x === 'object' ? (x.field && x.rule ? `${x.field}: ${x.rule}` : x.source && x.target ? `${x.source} → ${x.target}` : null) : String(x))).filter(Boolean);
      items.push(`${k}: ${names.length ? names.slice(0, 3).join(', ') + (names.length > 3 ? ` +${names.length - 3}` : '') : v.length}`);
    } else if (typeof v === 'object') {
      items.push(`${k}: ${Object.keys(v).length} setting${Object.keys(v).length === 1 ? '' : 's'}`);
    } else {
      items.push(`${k}: ${v}`);
    }
  }
  return items.length > max ? [...items.slice(0, max), `+${items.length - max} more`] : items;
}
