// Tiny DOM helpers: elements are built, never parsed from strings, so user data cannot inject markup.
import { errorText } from './api.js';

/** @typedef {import('./types.js').Child} Child */
/** @typedef {import('./types.js').Attrs} Attrs */
/** A form control `field()` and `setFieldError()` take. @typedef {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} Control */

/**
 * h('button', {type: 'button', onclick}, 'Save') → an element. `null`/`false` children are skipped.
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attrs | null} [attrs]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  /** `value` is set on the controls that have one (input, select, textarea, button, option…). */
  const control = /** @type {HTMLElement & {value: unknown}} */ (el);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), /** @type {EventListener} */ (v));
    else if (k === 'class') el.className = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k === 'value') control.value = v;
    else if (k === 'checked') /** @type {HTMLInputElement} */ (el).checked = Boolean(v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

/**
 * @param {Element} el
 * @param {Child[]} children
 */
function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/**
 * Replaces the children of `el`.
 * @template {Element} E
 * @param {E} el
 * @param {...Child} children
 * @returns {E}
 */
export function render(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

/** @param {string} text */
export function announce(text) {
  const live = document.getElementById('announce');
  if (live) live.textContent = text;
}

/**
 * A labelled form field: label + control (+ hint) + its error slot, wired with for/id and aria-describedby.
 * @param {Child} label
 * @param {Control} control
 * @param {Child} [hint]
 */
export function field(label, control, hint) {
  const id = control.id || `f-${control.name || 'x'}-${Math.random().toString(36).slice(2, 7)}`;
  control.id = id;
  const hintEl = hint ? h('div', { class: 'hint', id: `${id}-hint` }, hint) : null;
  const errorEl = h('div', { class: 'field-error', id: `${id}-error`, hidden: true });
  if (hintEl) control.dataset.hint = hintEl.id;
  describe(control);
  return h('div', { class: 'field' }, h('label', { for: id }, label), hintEl, control, errorEl);
}

/**
 * aria-describedby of a field's control: its hint and, while it shows one, its error.
 * @param {HTMLElement} control
 */
function describe(control) {
  const id = control.id;
  const parts = [];
  if (control.dataset.hint) parts.push(control.dataset.hint);
  if (control.getAttribute('aria-invalid') === 'true') parts.push(`${id}-error`);
  if (parts.length) control.setAttribute('aria-describedby', parts.join(' '));
  else control.removeAttribute('aria-describedby');
}

/**
 * Shows `message` at the field of `control` (aria-invalid + aria-describedby), or clears it.
 * @param {HTMLElement} control
 * @param {string | null} message
 */
export function setFieldError(control, message) {
  const box = control.closest('.field') ?? control.parentElement;
  /** @type {HTMLElement | null | undefined} */
  const errorEl = box?.querySelector(`#${CSS.escape(control.id)}-error`);
  if (message) {
    control.setAttribute('aria-invalid', 'true');
    if (errorEl) {
      errorEl.textContent = message;
      errorEl.hidden = false;
    }
  } else {
    control.removeAttribute('aria-invalid');
    if (errorEl) {
      errorEl.textContent = '';
      errorEl.hidden = true;
    }
  }
  describe(control);
}

/**
 * The problems of a form: each shown at its field, and a summary (role=alert) whose links move
 * focus to the field. `problems` = [{control, message}] (control null: a problem of the form).
 * Returns the summary (to render and focus) or null when there is none.
 * @param {Iterable<HTMLElement>} controls
 * @param {{control: HTMLElement | null, message: string}[]} problems
 */
export function showProblems(controls, problems) {
  for (const c of controls) setFieldError(c, problems.find((p) => p.control === c)?.message ?? null);
  if (!problems.length) return null;
  const summary = h('div', { class: 'notice bad error-summary', role: 'alert', tabindex: '-1', dataset: { problems: String(problems.length) } },
    h('h3', {}, problems.length === 1 ? 'There is a problem' : `There are ${problems.length} problems`),
    h('ul', {}, problems.map((p) => h('li', {}, p.control
      ? h('a', { href: `#${p.control.id}`, onclick: (e) => { e.preventDefault(); p.control?.focus(); } }, p.message)
      : p.message))));
  return summary;
}

/**
 * @param {string} kind `ok`, `bad`, `warn`, `info`…: `bad` is an alert, the others a status
 * @param {...Child} children
 */
export function notice(kind, ...children) {
  return h('div', { class: `notice ${kind}`, role: kind === 'bad' ? 'alert' : 'status' }, ...children);
}

/** @param {string} text */
export function badge(text) {
  return h('span', { class: `badge ${text}` }, text);
}

/** @param {string | number | null | undefined} iso */
export function fmtDate(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? String(iso) : d.toISOString().replace('T', ' ').replace(/\.\d{3}Z$/, ' UTC');
}

/**
 * @template {unknown[]} A
 * @param {(...args: A) => void} fn
 * @param {number} ms
 * @returns {(...args: A) => void}
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

/**
 * Offers `data` as a JSON file download.
 * @param {string} filename
 * @param {unknown} data
 */
export function download(filename, data) {
  const blob = new Blob([JSON.stringify(data, null, 2) + '\n'], { type: 'application/json' });
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/**
 * Moves focus to the page's heading (its <h1>, made focusable) or its [autofocus] field, and names the
 * tab after the heading. `show()` calls it for every new page; a region that draws its content later
 * (async view, loadInto) calls it with `ifUnfocused` when its first content arrives, so the heading
 * it brings gets the focus the page could only give to <main> while it was loading.
 * @param {{ifUnfocused?: boolean}} [options]
 */
export function focusPage({ ifUnfocused = false } = {}) {
  const main = document.getElementById('main');
  if (!main) return;
  const active = document.activeElement;
  if (ifUnfocused && active && active !== main && active !== document.body) return;
  const heading = main.querySelector('h1');
  document.title = `${heading ? heading.textContent + ' · ' : ''}bi-controller`;
  const target = /** @type {HTMLElement} */ (main.querySelector('[autofocus]') ?? heading ?? main);
  if (target === heading && !heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
  target.focus({ preventScroll: true });
}

/**
 * The state of a page being loaded (aria-busy), shown until its content or its error replaces it.
 * @param {string} [what]
 * @param {{id?: string}} [options]
 */
export function loadingView(what = 'Loading…', { id } = {}) {
  return h('div', { class: 'panel loading', role: 'status', 'aria-busy': 'true', id }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ' ', what);
}

/**
 * A failed load: the reason and a Retry button.
 * @param {string} title
 * @param {Child} message
 * @param {(() => void) | null} [retry]
 */
export function errorView(title, message, retry) {
  const again = h('button', { type: 'button', id: 'retry', onclick: retry ?? null }, 'Retry');
  return h('section', { class: 'panel', id: 'page-error', 'aria-labelledby': 'page-error-h' },
    h('h1', { id: 'page-error-h', tabindex: '-1' }, title),
    h('div', { class: 'notice bad', role: 'alert' }, message),
    retry ? h('div', { class: 'actions' }, again) : null);
}

let dialogSeq = 0;

/**
 * A modal confirmation (<dialog>): focus starts on Cancel (Enter never confirms by accident),
 * Escape cancels, leaving the page cancels, and a cancel returns focus to the element that opened it.
 * `text` (a sentence) or `body` (nodes) says what happens. With `typed`, the action is enabled only
 * once that exact text is typed (like GitHub's deletes). With `action()`, it runs on confirm while
 * the dialog stays open: its error is shown in the dialog, which stays open for another try.
 * Resolves true when confirmed (and the action ran), false when cancelled.
 * @param {{title: string, text?: string, body?: Child, confirmLabel: string, cancelLabel?: string, danger?: boolean, typed?: string, action?: () => Promise<unknown>, id?: string}} options
 * @returns {Promise<boolean>}
 */
export function confirmDialog({ title, text, body, confirmLabel, cancelLabel = 'Cancel', danger = true, typed, action, id }) {
  const opener = document.activeElement;
  const n = ++dialogSeq;
  return new Promise((resolve) => {
    const error = h('div', { class: 'dialog-error', 'aria-live': 'assertive' });
    const input = typed
      ? h('input', { type: 'text', id: `confirm-${n}-typed`, name: 'confirm', autocomplete: 'off', spellcheck: 'false', 'aria-describedby': `confirm-${n}-hint` })
      : null;
    const cancel = h('button', { type: 'button', class: 'secondary', 'data-action': 'cancel' }, cancelLabel);
    const ok = h('button', { type: 'button', class: danger ? 'danger' : '', 'data-action': 'confirm', id: id ? `${id}-confirm` : null, disabled: Boolean(typed) }, confirmLabel);
    const dialog = h('dialog', { class: 'confirm', id, 'aria-labelledby': `confirm-${n}-h`, 'aria-describedby': `confirm-${n}-text` },
      h('h2', { id: `confirm-${n}-h` }, title),
      h('div', { class: 'dialog-body', id: `confirm-${n}-text` }, text ? h('p', {}, text) : null, body),
      input && h('div', { class: 'field' },
        h('label', { for: input.id }, 'To confirm, type ', h('strong', { class: 'mono' }, typed), ' below'),
        input,
        h('div', { class: 'hint', id: `confirm-${n}-hint` }, 'The action button is enabled once the text matches.')),
      error,
      h('div', { class: 'actions dialog-actions' }, cancel, ok));
    let done = false;
    /** @param {boolean} answer */
    const close = (answer) => {
      if (done) return;
      done = true;
      window.removeEventListener('hashchange', leave);
      dialog.close();
      dialog.remove();
      if (!answer && opener instanceof HTMLElement && opener.isConnected) opener.focus();
      resolve(answer);
    };
    const leave = () => close(false);
    const matches = () => !input || input.value.trim() === typed;
    input?.addEventListener('input', () => (ok.disabled = !matches()));
    input?.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && !ok.disabled) ok.click();
    });
    cancel.addEventListener('click', () => close(false));
    window.addEventListener('hashchange', leave);
    // Escape: the browser fires `cancel`; closing is ours so the promise settles (not while the action runs).
    dialog.addEventListener('cancel', (e) => {
      e.preventDefault();
      if (!ok.dataset.busy) close(false);
    });
    ok.addEventListener('click', async () => {
      if (!action) return close(true);
      ok.disabled = cancel.disabled = true;
      ok.dataset.busy = 'true';
      error.replaceChildren();
      try {
        await action();
        close(true);
      } catch (err) {
        error.replaceChildren(notice('bad', errorText(err)));
        ok.disabled = !matches();
        cancel.disabled = false;
        delete ok.dataset.busy;
      }
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
