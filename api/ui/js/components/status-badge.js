// Status badges of runs, steps and tests: one colour per meaning, the word always shown.
import { h } from '../dom.js';

/** @type {Record<string, string>} */
const KIND = {
  succeeded: 'ok', ok: 'ok', enabled: 'ok', active: 'ok',
  failed: 'bad', disabled: 'bad',
  running: 'live', queued: 'wait',
  cancelled: 'muted', skipped: 'muted', pending: 'muted', off: 'muted', never: 'muted',
};

export const ACTIVE_RUN = ['queued', 'running'];

/** A pill with the status word; `label` replaces the word shown (the status stays in data-status). */
/**
 * @param {string} status
 * @param {import('../types.js').Child} [label]
 */
export function statusBadge(status, label) {
  return h('span', { class: `badge ${KIND[status] ?? 'muted'}`, dataset: { status } }, label ?? status);
}
