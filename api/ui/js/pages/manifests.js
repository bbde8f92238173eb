import { call } from '../api.js';
import { announce, badge, confirmDialog, field, fmtDate, h, notice } from '../dom.js';
import { KINDS, PHASES } from '../schema-constants.js';
import { asyncView, errorText } from '../components/async-view.js';
import { inlineFacts } from '../components/facts.js';
import { phaseRank, revisionText } from '../components/manifest-status.js';
import { objectHref } from './object.js';

/** @typedef {import('../types.js').ApiReconcileStatus} ReconcileStatus */
/** @typedef {import('../types.js').ApiStatusItem} StatusItem */
/** @typedef {{canAct: boolean, flash: HTMLElement, reload: () => Promise<void>}} RowContext */

const enc = encodeURIComponent;

/** Manifests (`#/manifests?kind=&phase=`): the reconcile status of every object, failures first; Sync now; a blocked mass prune confirmed. */
/**
 * @param {URLSearchParams} query
 * @param {import('../types.js').ApiSettingsSession} me
 */
export function manifestsPage(query, me) {
  const state = { kind: query.get('kind') ?? '', phase: query.get('phase') ?? '' };
  const canAct = Boolean(me?.settings);
  const flash = h('div', { id: 'manifests-flash' });
  const load = async () => {
    const qs = new URLSearchParams();
    if (state.kind) qs.set('kind', state.kind);
    if (state.phase) qs.set('phase', state.phase);
    history.replaceState(null, '', `#/manifests${qs.size ? `?${qs}` : ''}`);
    // The totals per phase come from the unfiltered list; the table from the filtered one.
    /** @type {Promise<import('../types.js').Answer<ReconcileStatus>>} */
    const everything = call('GET', '/v1/reconciler/status');
    /** @type {Promise<import('../types.js').Answer<ReconcileStatus>> | null} */
    const chosen = qs.size ? call('GET', `/v1/reconciler/status?${qs}`) : null;
    const [all, filtered] = await Promise.all([everything, chosen]);
    return { all: all.body, items: (filtered ?? all).body.items };
  };
  /** @type {ReturnType<typeof asyncView> | undefined} */
  let view;
  // Built once and moved into each drawing, so a choice survives the reload it causes.
  const kind = h('select', { name: 'kind' }, h('option', { value: '' }, 'All kinds'), KINDS.map((k) => h('option', { value: k, selected: k === state.kind }, k)));
  const phase = h('select', { name: 'phase' }, h('option', { value: '' }, 'All phases'), PHASES.map((p) => h('option', { value: p, selected: p === state.phase }, p)));
  /** @param {HTMLElement | null} control */
  const refilter = async (control) => {
    state.kind = kind.value;
    state.phase = phase.value;
    await view?.reload();
    control?.focus();
  };
  kind.addEventListener('change', () => void refilter(kind));
  phase.addEventListener('change', () => void refilter(phase));
  const filters = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter manifests', onsubmit: (e) => e.preventDefault() },
    h('div', {}, field('Kind', kind)), h('div', {}, field('Phase', phase)));
  /**
   * @param {{all: ReconcileStatus, items: StatusItem[]}} data
   * @param {() => Promise<void>} reload
   */
  const draw = ({ all, items }, reload) =>
    h('div', {},
      sourcePanel(all),
      all.pruneBlocked ? pruneBlockedPanel(all.pruneBlocked, { canAct, flash, reload }) : null,
      summary(all.items, state, (p) => {
        phase.value = p;
        return refilter(null);
      }),
      h('div', { class: 'panel flush list-panel' },
        h('div', { class: 'list-head' }, filters, h('span', { class: 'muted small', role: 'status' }, `${items.length} of ${all.items.length} manifests`)),
        items.length ? table(items, { canAct, flash, reload }) : h('div', { class: 'empty-state', id: 'manifests-empty' },
          h('h2', {}, all.items.length ? 'No manifest matches' : 'No manifests yet'),
          h('p', {}, all.items.length ? 'Change the kind or the phase filter.' : 'Put manifests in the folder (or the git repository), or onboard a client.'))));
  const shown = asyncView({ load, draw, label: 'the reconcile status', id: 'manifests-view' });
  view = shown;
  const sync = canAct ? h('button', { type: 'button', id: 'sync-now', onclick: (e) => syncNow(/** @type {HTMLButtonElement} */ (e.currentTarget), {}, flash, shown.reload) }, 'Sync now') : null;
  return h('section', { 'aria-labelledby': 'manifests-h', class: 'tenants manifests-page' },
    h('header', { class: 'page-head' },
      h('div', { class: 'title-block' }, h('h1', { id: 'manifests-h' }, 'Manifests'), h('p', { class: 'subtitle muted' }, 'What the reconciler applied from the source, failures first.')),
      sync && h('div', { class: 'page-actions' }, sync)),
    flash, shown);
}

/** @param {ReconcileStatus} s */
function sourcePanel(s) {
  const src = s.source;
  return h('section', { class: 'panel source', 'aria-label': 'Source', id: 'manifests-source' },
    inlineFacts([
      ['Source', [h('span', { class: 'badge muted' }, src?.type ?? '—'), ' ', h('span', { class: 'mono wrap' }, src?.location ?? '—')]],
      src?.branch ? ['Branch', src.branch + (src.path ? ` · ${src.path}` : ''), 'mono'] : null,
      ['Revision applied', s.revision ? revisionText(s.revision) : src?.type === 'git' ? '—' : 'none (a folder has no revisions)', 'mono'],
      ['Ready', s.ready ? h('span', { class: 'badge ok' }, 'yes') : h('span', { class: 'badge warn' }, 'first sync running')],
    ]),
    s.gitError ? notice('bad', `Git: ${s.gitError}`) : null);
}

/**
 * @param {import('../types.js').ApiPruneBlocked} pb
 * @param {RowContext} context
 */
function pruneBlockedPanel(pb, { canAct, flash, reload }) {
  return h('section', { class: 'notice warn prune-blocked', role: 'alert', id: 'prune-blocked' },
    h('h2', {}, 'A mass prune is waiting for confirmation'),
    h('p', {}, `The source no longer defines ${pb.keys.length} of ${pb.live} live objects (${fmtDate(pb.at)}). The reconciler kept them: removing so much at once looks like an emptied folder or a bad push.`),
    h('ul', { class: 'chips' }, pb.keys.slice(0, 12).map((k) => h('li', { class: 'chip mono' }, k)), pb.keys.length > 12 ? h('li', { class: 'chip' }, `+${pb.keys.length - 12} more`) : null),
    canAct ? h('div', { class: 'actions' }, h('button', { type: 'button', id: 'review-prune', class: 'danger', onclick: () => confirmPrune(pb, flash, reload) }, 'Review and prune…')) : null);
}

/**
 * @param {import('../types.js').ApiPruneBlocked} pb
 * @param {HTMLElement} flash
 * @param {() => Promise<void>} reload
 */
function confirmPrune(pb, flash, reload) {
  return confirmDialog({
    id: 'prune-dialog',
    title: `Prune ${pb.keys.length} objects?`,
    confirmLabel: `Prune ${pb.keys.length} objects`,
    typed: String(pb.keys.length),
    body: [
      h('p', {}, 'These manifests are gone from the source; a sync that allows the mass prune removes what they created:'),
      h('ul', { class: 'goes', id: 'prune-keys' }, pb.keys.map((k) => h('li', { class: 'mono' }, k))),
      h('p', { class: 'small' }, 'If the source was emptied by mistake, restore it and press Sync now instead.'),
    ],
    action: async () => {
      /** @type {import('../types.js').Answer<import('../types.js').ApiSyncReport>} */
      const r = await call('POST', '/v1/reconciler/sync', { body: { allowMassPrune: true } });
      reportSync(r.body, flash);
      await reload();
    },
  });
}

/**
 * @param {HTMLButtonElement} button
 * @param {import('../types.js').ApiSyncRequest} body
 * @param {HTMLElement} flash
 * @param {() => Promise<void>} reload
 */
async function syncNow(button, body, flash, reload) {
  button.disabled = true;
  flash.replaceChildren(notice('info', 'Syncing…'));
  try {
    /** @type {import('../types.js').Answer<import('../types.js').ApiSyncReport>} */
    const r = await call('POST', '/v1/reconciler/sync', { body });
    reportSync(r.body, flash);
    await reload();
  } catch (err) {
    flash.replaceChildren(notice('bad', `Sync failed: ${errorText(err)}`));
  } finally {
    button.disabled = false;
  }
}

/**
 * @param {import('../types.js').ApiSyncReport} r
 * @param {HTMLElement} flash
 */
function reportSync(r, flash) {
  const text = `Synced${r.revision ? ` ${revisionText(r.revision)}` : ''}: ${r.scanned} scanned, ${r.applied.length} applied, ${r.pruned.length} pruned, ${r.failed.length} failed, ${r.invalid.length} invalid.`;
  const kind = r.failed.length || r.invalid.length ? 'warn' : r.pruneBlocked ? 'warn' : 'ok';
  flash.replaceChildren(notice(kind, text, r.pruneBlocked ? ` A prune of ${r.pruneBlocked.keys.length} objects is waiting for confirmation.` : ''));
  announce(text);
}

/**
 * @param {StatusItem[]} items
 * @param {{kind: string, phase: string}} state
 * @param {(phase: string) => Promise<void>} choose
 */
function summary(items, state, choose) {
  /** @type {Record<string, number>} */
  const counts = Object.fromEntries(PHASES.map((p) => [p, 0]));
  for (const i of items) counts[i.phase] = (counts[i.phase] ?? 0) + 1;
  return h('ul', { class: 'phase-summary', 'aria-label': 'Manifests by phase' },
    PHASES.map((p) => h('li', { class: `phase-card ${p}${state.phase === p ? ' active' : ''}` },
      h('button', {
        type: 'button', class: 'phase-button', 'aria-pressed': String(state.phase === p), dataset: { phase: p },
        onclick: () => void choose(state.phase === p ? '' : p),
      }, h('span', { class: 'n' }, String(counts[p])), h('span', { class: 'label' }, p)))));
}

/** @param {StatusItem} m */
const clientHref = (m) => (m.kind === 'Client' ? `#/clients/${enc(String(m.resourceIds?.clientId ?? m.name))}` : null);

/**
 * @param {StatusItem[]} items
 * @param {RowContext} context
 */
function table(items, { canAct, flash, reload }) {
  // A prune the guard holds comes right after the failures.
  /** @param {StatusItem} m */
  const rank = (m) => (m.reason === 'prune-blocked' ? 1.5 : phaseRank(m.phase));
  const rows = [...items].sort((a, b) => rank(a) - rank(b) || a.key.localeCompare(b.key));
  return h('div', { class: 'table-wrap' },
    h('table', { id: 'manifests-table' },
      h('caption', { class: 'visually-hidden' }, 'Reconcile status of every manifest, failures first'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Object'), h('th', { scope: 'col' }, 'Phase'), h('th', { scope: 'col' }, 'Details'),
        h('th', { scope: 'col', class: 'hide-narrow' }, 'Revision'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Changed'),
        canAct ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')) : null)),
      h('tbody', {}, rows.map((m) => {
        const key = m.key;
        const href = clientHref(m);
        const failing = m.phase === 'Failed' || m.phase === 'Invalid';
        return h('tr', { dataset: { key, phase: m.phase } },
          h('td', {}, h('div', { class: 'small muted' }, m.kind || 'File (not parsed)'), href ? h('a', { href, class: 'strong wrap' }, m.name) : h('span', { class: 'strong wrap' }, m.name),
            h('div', { class: 'mono small muted wrap' }, m.path ?? 'no file')),
          h('td', {}, badge(m.phase), m.attempts > 1 && failing ? h('div', { class: 'small muted' }, `${m.attempts} attempts`) : null),
          h('td', { class: 'details' },
            m.reason ? h('div', {}, h('span', { class: 'reason' }, m.reason)) : null,
            (m.phase !== 'Synced' || m.reason) && m.message ? h('div', { class: 'small wrap' }, m.message) : null,
            m.nextRetryAt && failing ? h('div', { class: 'small muted' }, `Next retry ${fmtDate(m.nextRetryAt)}`) : null,
            !m.reason && m.phase === 'Synced' ? h('span', { class: 'muted small' }, 'Up to date') : null),
          h('td', { class: 'mono hide-narrow' }, revisionText(m.lastAppliedRevision)),
          h('td', { class: 'hide-narrow small' }, fmtDate(m.lastTransitionAt)),
          canAct ? h('td', {}, m.kind && !key.startsWith('File/') ? h('a', { class: 'button secondary small-button', href: objectHref(key), 'aria-label': `Manifest, diff and history of ${key}` }, 'Manifest') : null, failing && m.path ? h('button', { type: 'button', class: 'secondary small-button', 'aria-label': `Retry ${key}`, onclick: (e) => retryRow(/** @type {HTMLButtonElement} */ (e.currentTarget), key, flash, reload) }, 'Retry') : null) : null);
      }))));
}

/**
 * @param {HTMLButtonElement} button
 * @param {string} key
 * @param {HTMLElement} flash
 * @param {() => Promise<void>} reload
 */
async function retryRow(button, key, flash, reload) {
  button.disabled = true;
  try {
    /** @type {import('../types.js').Answer<import('../types.js').ApiRetryResult>} */
    const r = await call('POST', '/v1/reconciler/retry', { body: { key } });
    const text = r.body.phase === 'Synced' ? `${key} is Synced.` : `${key} is still ${r.body.phase}: ${r.body.message}`;
    flash.replaceChildren(notice(r.body.phase === 'Synced' ? 'ok' : 'bad', text));
    announce(text);
    await reload();
  } catch (err) {
    flash.replaceChildren(notice('bad', `Retry failed: ${errorText(err)}`));
    button.disabled = false;
  }
}
