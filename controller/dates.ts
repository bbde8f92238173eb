/**
 * Strict ISO 8601: `YYYY-MM-DD`, optionally `THH:MM[:SS[.fraction]]` and a zone (`Z`, `±HH:MM`,
 * `±HHMM`; none = UTC). Every field must be in range (`2027-02-30` and `24:00` are refused)
 * where `Date.parse` would roll them over into the next month or day.
 */
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-](\d{2}):?(\d{2}))?)?$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The instant `text` names, or undefined when it is not a strict ISO 8601 date(-time). */
export function parseIsoDate(text: string): Date | undefined {
  const m = ISO_8601.exec(text);
  if (!m) return undefined;
  const [year, month, day] = [m[1], m[2], m[3]].map(Number);
  const [hour, minute, second] = [m[4], m[5], m[6]].map((v) => Number(v ?? 0));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  if (m[8] !== undefined && (Number(m[8]) > 23 || Number(m[9]) > 59)) return undefined;
  const withZone = m[4] === undefined ? `${text}T00:00:00Z` : m[7] === undefined ? `${text}Z` : text;
  const at = Date.parse(withZone);
  return Number.isNaN(at) ? undefined : new Date(at);
}
