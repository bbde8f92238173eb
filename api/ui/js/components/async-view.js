// The one way a region loads its content: a loading state at once (the page never shows the previous
// page meanwhile), the content when the load resolves, or the error with a Retry button. The first
// content takes the focus the page could only give to <main> while it loaded (see dom.js focusPage).
import { ApiError } from '../api.js';
import { focusPage, h, loadingView, render } from '../dom.js';

/**
 * The message of a failed call, as a person reads it.
 * @param {unknown} err
 */
export function errorText(err) {
  if (err instanceof ApiError) return err.status ? `${err.message} (HTTP ${err.status})` : err.message;
  return err instanceof Error ? err.message : String(err);
}

/**
 * `load()` resolves the data; `draw(data, reload)` returns the content. `label` names what is
 * loading ("client ACME"). Fills `into` (or a new region with `id`) and returns it;
 * `region.reload()` loads again (keeping the content until the new one is there).
 * @template T
 * @param {{load: () => Promise<T>, draw: (data: T, reload: () => Promise<void>) => import('../types.js').Child, label: string, id?: string, into?: HTMLElement}} options
 * @returns {HTMLElement & {reload: () => Promise<void>}}
 */
export function asyncView({ load, draw, label, id, into }) {
  const region = /** @type {HTMLElement & {reload: () => Promise<void>}} */ (into ?? h('div', { class: 'async', id }));
  region.setAttribute('aria-busy', 'true');
  render(region, loadingView(`Loading ${label}…`));
  let loaded = false;
  const reload = async () => {
    region.setAttribute('aria-busy', 'true');
    try {
      const data = await load();
      render(region, draw(data, reload));
      if (!loaded && region.isConnected) focusPage({ ifUnfocused: true });
      loaded = true;
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return;
      const retry = h('button', { type: 'button', class: 'secondary', 'data-action': 'retry', onclick: () => void reload() }, 'Retry');
      render(region, h('div', { class: 'notice bad load-error', role: 'alert' },
        h('strong', {}, `Could not load ${label}. `), errorText(err),
        h('div', { class: 'actions' }, retry)));
      if (loaded) retry.focus();
    } finally {
      region.removeAttribute('aria-busy');
    }
  };
  region.reload = reload;
  void reload();
  return region;
}

/**
 * `asyncView` into an existing `box`, with `view(data, reload)`; returns the reload function.
 * @template T
 * @param {HTMLElement} box
 * @param {() => Promise<T>} load
 * @param {(data: T, reload: () => Promise<void>) => import('../types.js').Child} view
 * @param {{what?: string}} [options]
 */
export function loadInto(box, load, view, { what = 'data' } = {}) {
  return asyncView({ load, draw: view, label: what, into: box }).reload;
}

/**
 * An empty state: a title, a sentence and optional actions.
 * @param {string} title
 * @param {import('../types.js').Child} text
 * @param {...import('../types.js').Child} actions
 */
export function emptyState(title, text, ...actions) {
  return h('div', { class: 'panel empty' }, h('p', { class: 'empty-title' }, title), h('p', { class: 'muted' }, text), actions.length ? h('div', { class: 'actions' }, actions) : null);
}
