// Shared bits of reconcile status: the order failures come first in, and revisions as people read them.

/** Failures first: Failed, Invalid, Pending, then Synced and Pruned. */
/** @type {Record<string, number>} */
const RANK = { Failed: 0, Invalid: 1, Pending: 2, Synced: 3, Pruned: 4 };

/** @param {string} phase */
export function phaseRank(phase) {
  return RANK[phase] ?? 5;
}

/** A git revision shortened to 10 characters; none: "—". */
/** @param {string | null | undefined} rev */
export function revisionText(rev) {
  if (!rev) return '—';
  return /^[0-9a-f]{40}$/i.test(rev) ? rev.slice(0, 10) : rev;
}
