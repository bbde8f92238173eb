import { announce, h, render } from './dom.js';

/**
 * A step of the checklist as given: `match` finds the reconciler step names it stands for.
 * @typedef {{id: string, group: string, label: string, match?: RegExp, skip?: boolean}} StepSpec
 */
/**
 * A row of the checklist: the step, its state, its detail and its element once drawn.
 * @typedef {StepSpec & {state: string, detail?: string, seen?: string, li: HTMLLIElement | null}} Row
 */

/** @type {Record<string, string>} */
const MARKS = { pending: '○', running: '…', done: '✓', failed: '✗', skipped: '–', refused: '⊘' };

/**
 * A live checklist of onboarding steps. Rows are matched to reconciler step names by pattern;
 * a step event means "this step started", so the rows before it are done.
 */
export class Progress {
  /** @param {StepSpec[]} steps */
  constructor(steps) {
    /** @type {Row[]} */
    this.rows = steps.map((s) => ({ ...s, state: s.skip ? 'skipped' : 'pending', li: null }));
    this.el = h('ul', { class: 'progress', 'aria-label': 'Progress', 'aria-live': 'polite' });
    for (const r of this.rows) this.#draw(r);
  }

  /** @param {Row} row */
  #draw(row) {
    const li = row.li ?? h('li');
    li.dataset.step = row.id;
    li.dataset.group = row.group;
    li.dataset.state = row.state;
    if (row.seen) li.dataset.seen = row.seen;
    render(
      li,
      h('span', { class: 'mark', 'aria-hidden': 'true' }, MARKS[row.state]),
      h('span', { class: 'label' }, row.label),
      h('span', { class: 'visually-hidden' }, ` (${row.state})`),
      row.detail ? h('span', { class: 'detail' }, row.detail) : null,
    );
    if (!row.li) {
      row.li = li;
      this.el.append(li);
    }
  }

  /**
   * @param {string} id
   * @param {string} state
   * @param {string} [detail]
   * @param {string} [seen]
   */
  set(id, state, detail, seen) {
    const row = this.rows.find((r) => r.id === id);
    if (!row || row.state === 'skipped') return;
    row.state = state;
    if (detail !== undefined) row.detail = detail;
    if (seen) row.seen = seen;
    this.#draw(row);
    if (state === 'done' || state === 'failed') announce(`${row.label}: ${state}`);
  }

  /** The row a reconciler step name belongs to; unknown names get a row of their own. */
  /**
   * @param {string} stepName
   * @param {string} group
   * @returns {Row}
   */
  rowFor(stepName, group) {
    const candidates = this.rows.filter((r) => r.group === group);
    const found = candidates.find((r) => r.match && r.match.test(stepName));
    if (found) return found;
    /** @type {Row} */
    const extra = { id: `${group}:${stepName}`, group, label: stepName, state: 'pending', li: null };
    const last = candidates[candidates.length - 1];
    this.rows.splice(last ? this.rows.indexOf(last) + 1 : this.rows.length, 0, extra);
    this.#draw(extra);
    if (last && last.li && extra.li) last.li.after(extra.li);
    return extra;
  }

  /** A step event from the reconciler (`seen = 'event'`) or inferred from a response. */
  /**
   * @param {string} stepName
   * @param {string} group
   * @param {string} [seen]
   */
  started(stepName, group, seen = 'event') {
    const row = this.rowFor(stepName, group);
    for (const r of this.rows) {
      if (r === row) break;
      if (r.group === group && (r.state === 'running' || r.state === 'pending')) this.set(r.id, 'done', undefined, r.seen);
    }
    this.set(row.id, 'running', undefined, seen);
  }

  /** The run stopped without an answer (network error, 5xx): running rows failed with `reason`, the rest not done. */
  /** @param {string} reason */
  abort(reason) {
    let failed = false;
    for (const r of this.rows) {
      if (r.state === 'running') {
        this.set(r.id, 'failed', reason);
        failed = true;
      }
    }
    if (!failed) {
      const first = this.rows.find((r) => r.state === 'pending');
      if (first) this.set(first.id, 'failed', reason);
    }
    for (const r of this.rows) if (r.state === 'pending') this.set(r.id, 'skipped');
  }

  /** Nothing was done (the client already exists): every row not run. */
  /**
   * @param {string} group
   * @param {string} [detail]
   */
  skipAll(group, detail) {
    for (const r of this.rows) if (r.group === group && r.state !== 'skipped') this.set(r.id, 'skipped', r === this.rows.find((x) => x.group === group) ? detail : undefined);
  }

  /**
   * The server refused the write before any of it was done (409): no step ran, so none failed;
   * every row of `group` is marked not run, the first with the reason.
   */
  /**
   * @param {string} group
   * @param {string} reason
   */
  refuse(group, reason) {
    const rows = this.rows.filter((r) => r.group === group && r.state !== 'skipped');
    rows.forEach((r, i) => this.set(r.id, 'refused', i === 0 ? `refused before any write: ${reason}` : 'not run'));
    announce(`Refused: ${reason}`);
  }

  /** Every remaining row of `group` is done. */
  /**
   * @param {string} group
   * @param {string} [detail]
   */
  completeGroup(group, detail) {
    for (const r of this.rows) if (r.group === group && r.state !== 'skipped' && r.state !== 'failed') this.set(r.id, 'done', r.id === this.lastOf(group)?.id ? detail : undefined);
  }

  /** @param {string} group */
  lastOf(group) {
    return [...this.rows].reverse().find((r) => r.group === group && r.state !== 'skipped');
  }

  /** The failing step: its row failed with the reason, the rows done before it rolled back. */
  /**
   * @param {string} group
   * @param {string | null} stepName
   * @param {string} reason
   */
  fail(group, stepName, reason) {
    const row = stepName ? this.rowFor(stepName, group) : this.rows.find((r) => r.group === group && r.state === 'running') ?? this.lastOf(group);
    for (const r of this.rows) {
      if (r === row) break;
      if (r.group === group && r.state === 'done') this.set(r.id, 'done', 'rolled back');
    }
    if (row) this.set(row.id, 'failed', reason);
    for (const r of this.rows) if (r.group === group && r.state === 'pending') this.set(r.id, 'skipped');
  }
}
