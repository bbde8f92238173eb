// Shared bits of the fleet pages (ClientSets, lifecycle, workers, audit, notifiers): refreshing a
// polled region without taking the keyboard's place away, a 400's problems by field path, and the
// state words with a symbol (never colour alone).
import { ApiError } from '../api.js';
import { asyncView, errorText } from './async-view.js';
import { h, notice } from '../dom.js';
import { pollWhileShown } from './poll.js';

/**
 * Puts `next` (freshly drawn content) into `region`. Nothing inside the region has focus: the
 * children are replaced. Otherwise the tree is patched around the focused element: it and its
 * ancestors stay the same nodes (their attributes and texts updated), every other node is replaced,
 * so a poll never moves focus nor resets a control being used.
 * @param {HTMLElement} region
 * @param {HTMLElement} next
 */
export function refreshInPlace(region, next) {
  const active = document.activeElement;
  if (!active || active === region || !region.contains(active)) {
    region.replaceChildren(...next.childNodes);
    return;
  }
  morphChildren(region, next, active);
}

/**
 * A region loaded like `asyncView` (loading state, content or error with Retry), then read again
 * every `ms` while it is on the page and patched in place (`refreshInPlace`). `region.refresh()`
 * reads it again at once, the same way.
 * @template T
 * @param {{load: () => Promise<T>, draw: (data: T, reload?: () => Promise<void>) => import('../types.js').Child, label: string, id: string, ms: number}} options
 * @returns {HTMLElement & {reload: () => Promise<void>, refresh: () => Promise<void>}}
 */
export function polledView({ load, draw, label, id, ms }) {
  const region = /** @type {HTMLElement & {reload: () => Promise<void>, refresh: () => Promise<void>}} */ (asyncView({ load, draw, label, id }));
  region.refresh = async () => refreshInPlace(region, h('div', {}, draw(await load())));
  pollWhileShown(region, ms, async () => {
    if (region.getAttribute('aria-busy') !== 'true' && !region.querySelector('.load-error')) await region.refresh();
    return true;
  });
  return region;
}

/**
 * @param {Node} a
 * @param {Node} b
 */
function sameSlot(a, b) {
  return a.nodeType === 1 && b.nodeType === 1 && sameElementSlot(/** @type {HTMLElement} */ (a), /** @type {HTMLElement} */ (b));
}

/**
 * @param {HTMLElement} a
 * @param {HTMLElement} b
 */
function sameElementSlot(a, b) {
  return a.tagName === b.tagName && (a.dataset.key ?? '') === (b.dataset.key ?? '') && (a.id ?? '') === (b.id ?? '');
}

/**
 * @param {Element} a
 * @param {Element} b
 * @param {Element} active
 */
function morph(a, b, active) {
  for (const { name } of [...a.attributes]) if (!b.hasAttribute(name)) a.removeAttribute(name);
  for (const { name, value } of [...b.attributes]) if (a.getAttribute(name) !== value) a.setAttribute(name, value);
  morphChildren(a, b, active);
}

/**
 * @param {Element} a
 * @param {Element} b
 * @param {Element} active
 */
function morphChildren(a, b, active) {
  const old = [...a.childNodes];
  const fresh = [...b.childNodes];
  for (let i = 0; i < Math.max(old.length, fresh.length); i++) {
    const o = old[i];
    const n = fresh[i];
    if (!o) a.append(n);
    else if (!o.contains(active)) {
      if (n) o.replaceWith(n);
      else o.remove();
    }
    else if (n && sameSlot(o, n)) morph(/** @type {Element} */ (o), /** @type {Element} */ (n), active);
    // The focused element has no counterpart any more: it stays until the next refresh without focus.
  }
}

/**
 * The problems of a refused request, by field path: the structured `problems: [{path, message}]`
 * of a 400 when the server sends them, else the paths read from its text. Null when there are none.
 * @param {unknown} err
 * @returns {{path: string, message: string}[] | null}
 */
export function problemsOf(err) {
  if (!(err instanceof ApiError) || err.status !== 400) return null;
  const structured = Array.isArray(err.body?.problems) ? err.body.problems.filter((p) => p && typeof p.message === 'string') : [];
  if (structured.length) return structured.map((p) => ({ path: String(p.path ?? ''), message: p.message }));
  const parsed = err.problems.map((p) => ({ path: p.path, message: p.path && p.text.startsWith(p.path) ? p.text.slice(p.path.length).trim() : p.text }));
  return parsed.length ? parsed : null;
}

/**
 * An error as a notice (role=alert): the problems by path when the server named them, else its text.
 * @param {unknown} err
 * @param {string} [lead]
 */
export function errorNotice(err, lead) {
  const problems = problemsOf(err);
  if (!problems) return notice('bad', lead ? h('strong', {}, `${lead} `) : null, errorText(err));
  return notice('bad',
    h('strong', {}, lead ?? (problems.length === 1 ? 'There is a problem:' : `There are ${problems.length} problems:`)),
    h('ul', { class: 'problems' }, problems.map((p) => h('li', { dataset: { path: p.path } }, p.path ? [h('code', {}, p.path), ' '] : null, p.message))));
}

/** A symbol per kind of state: the word is always shown beside it; the symbol is a second cue. */
/** @type {Record<string, string>} */
const SYMBOL = { ok: '✓', bad: '✕', wait: '…', live: '●', muted: '○', warn: '!' };

/** @type {Record<string, string>} */
const KIND = {
  Synced: 'ok', ACTIVE: 'ok', up: 'ok', ok: 'ok', delivered: 'ok', unchanged: 'muted',
  Failed: 'bad', Invalid: 'bad', FAILED: 'bad', lost: 'bad', failed: 'bad', refused: 'warn', invalid: 'bad',
  Pending: 'wait', SUSPENDED: 'wait', retrying: 'wait', paused: 'wait', held: 'wait',
  orphaned: 'warn', OFFBOARDED: 'warn', delete: 'bad', create: 'ok', update: 'live',
  DELETED: 'muted',
};

/** A pill with a symbol and the state's word (`data-state` keeps the word for tests and styles). */
/**
 * @param {string} state
 * @param {string} [label]
 */
export function stateBadge(state, label) {
  const kind = KIND[state] ?? 'muted';
  return h('span', { class: `badge state ${kind}`, dataset: { state } }, h('span', { class: 'sym', 'aria-hidden': 'true' }, SYMBOL[kind]), ' ', label ?? state);
}

/** A digest shortened for reading; the full value in its title. */
/** @param {string | null | undefined} d */
export function shortDigest(d) {
  if (!d) return h('span', { class: 'muted' }, '—');
  return h('code', { class: 'digest', title: d }, d.replace(/^sha256:/, '').slice(0, 12));
}
