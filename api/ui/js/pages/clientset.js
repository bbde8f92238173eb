import { call } from '../api.js';
import { announce, confirmDialog, field, fmtDate, h, notice, render, setFieldError } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { errorNotice, polledView, shortDigest, stateBadge } from '../components/fleet.js';
import { facts } from '../components/facts.js';

/** @typedef {import('../types.js').ApiClientSetRead['clientSet']} ClientSet */
/** @typedef {import('../types.js').ApiClientSetPreview} ClientSetPreview */
/** @typedef {{flash: HTMLElement, refresh: () => Promise<void>}} SetContext */

const enc = encodeURIComponent;
const STATES = ['Synced', 'Pending', 'Failed', 'Invalid', 'orphaned', 'OFFBOARDED'];
const ACTIONS = ['create', 'update', 'delete', 'unchanged', 'orphaned', 'invalid'];
/** How often the page reads the set again while it is shown (a rollout moves on its own). */
const POLL_MS = 5000;

/**
 * One ClientSet (`#/clientsets/<name>`): its rollout (wave, pause, what it holds, Approve with the
 * digest), per-tenant state with links to the clients, the last rendered digests, and a preview of
 * a changed manifest. The set is read again every few seconds, patched in place (focus stays put).
 * @param {string} name
 */
export function clientSetPage(name) {
  const flash = h('div', { id: 'clientset-flash' });
  const load = async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiClientSetRead>} */
    const r = await call('GET', `/v1/reconciler/clientsets/${enc(name)}`, { expect: [200, 404] });
    return r.status === 200 ? r.body.clientSet : null;
  };
  /** @returns {Promise<void>} */
  const refresh = () => region.refresh();
  /** @param {ClientSet | null} set */
  const draw = (set) => (set ? body(set, { flash, refresh }) : notice('bad', `ClientSet ${name} not found. `, h('a', { href: '#/clientsets' }, 'All ClientSets')));
  const region = polledView({ load, draw, label: `ClientSet ${name}`, id: 'clientset-view', ms: POLL_MS });
  return h('section', { 'aria-labelledby': 'clientset-h', class: 'fleet' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/clientsets' }, 'ClientSets'), h('span', { 'aria-hidden': 'true' }, ' / '), h('span', { 'aria-current': 'page' }, name)),
    h('h1', { id: 'clientset-h' }, `ClientSet ${name}`),
    flash,
    region,
    previewPanel(name));
}

/**
 * @param {ClientSet} set
 * @param {SetContext} context
 */
function body(set, { flash, refresh }) {
  const counts = Object.fromEntries(STATES.map((s) => [s, set.tenants.filter((t) => t.state === s).length]));
  return h('div', { class: 'clientset-body' },
    h('div', { class: 'subtitle', id: 'clientset-summary' },
      h('span', { class: 'tag', title: 'policy' }, `policy ${set.policy}`),
      h('span', {}, `${set.inputs} input${set.inputs === 1 ? '' : 's'}`),
      h('span', {}, 'digest ', shortDigest(set.digest)),
      set.present ? null : stateBadge('orphaned', 'file removed: its tenants follow the policy')),
    h('div', { class: 'cards' },
      rolloutPanel(set, { flash, refresh }),
      h('section', { class: 'panel card', 'aria-labelledby': 'cs-states-h', id: 'clientset-states' },
        h('h2', { id: 'cs-states-h' }, 'Tenants by state'),
        h('ul', { class: 'state-counts' }, STATES.map((s) => h('li', { dataset: { key: s } }, stateBadge(s), ' ', h('span', { class: 'strong', dataset: { count: s } }, String(counts[s]))))))),
    tenantsPanel(set),
    historyPanel(set));
}

/** The rollout in words: paused, held (and why), rolling out wave n, or idle. */
/** @param {import('../types.js').ApiClientSetRollout} r */
export function rolloutText(r) {
  if (r.paused) return h('div', { class: 'name-cell' }, stateBadge('paused', r.wave ? `paused at wave ${r.wave}` : 'paused'), r.reason ? h('span', { class: 'small' }, r.reason) : null);
  if (r.reason) return h('div', { class: 'name-cell' }, stateBadge('held', r.wave ? `held at wave ${r.wave}` : 'held'), h('span', { class: 'small' }, r.reason));
  if (r.wave) return stateBadge('Pending', `rolling out wave ${r.wave}`);
  return h('span', { class: 'muted' }, 'Nothing rolling out');
}

/**
 * @param {ClientSet} set
 * @param {SetContext} context
 */
function rolloutPanel(set, { flash, refresh }) {
  const held = set.rollout.paused || Boolean(set.rollout.reason);
  const approve = held
    ? h('button', { type: 'button', id: 'clientset-approve', dataset: { digest: set.digest ?? '' }, onclick: (e) => approveSet(set.name, /** @type {HTMLElement} */ (e.currentTarget).dataset.digest, { flash, refresh }) },
        `Approve${set.digest ? ` digest ${set.digest.replace(/^sha256:/, '').slice(0, 12)}` : ''}`)
    : null;
  return h('section', { class: 'panel card', 'aria-labelledby': 'cs-rollout-h', id: 'clientset-rollout' },
    h('h2', { id: 'cs-rollout-h' }, 'Rollout'),
    facts([
      ['State', rolloutText(set.rollout)],
      ['Wave', set.rollout.wave === null ? '—' : String(set.rollout.wave)],
      ['Digest', shortDigest(set.digest)],
    ]),
    held
      ? h('div', { class: 'actions' }, approve, h('p', { class: 'hint small' }, 'Approve releases what the set holds at this digest: the next wave, a pause after a fixed failure, or held deletions. If the set changed meanwhile, nothing is released.'))
      : null);
}

/**
 * @param {string} name
 * @param {string | undefined} digest
 * @param {SetContext} context
 */
function approveSet(name, digest, { flash, refresh }) {
  return confirmDialog({
    id: 'approve-dialog',
    title: `Approve ClientSet ${name}?`,
    text: `This releases what ${name} holds at digest ${digest || '(none)'}: the tenants of the next wave are updated, a paused rollout goes on, held deletions are done.`,
    confirmLabel: 'Approve',
    danger: false,
    action: async () => {
      await call('POST', `/v1/reconciler/clientsets/${enc(name)}/approve`, { body: digest ? { digest } : {} });
      const text = `Approved ${name}${digest ? ` at digest ${digest.replace(/^sha256:/, '').slice(0, 12)}` : ''}.`;
      flash.replaceChildren(notice('ok', text));
      announce(text);
      await refresh();
      document.getElementById('cs-rollout-h')?.setAttribute('tabindex', '-1');
      document.getElementById('cs-rollout-h')?.focus();
    },
  });
}

/** @param {ClientSet} set */
function tenantsPanel(set) {
  return h('section', { class: 'panel flush-table', 'aria-labelledby': 'cs-tenants-h', id: 'clientset-tenants' },
    h('h2', { id: 'cs-tenants-h' }, 'Tenants ', h('span', { class: 'count' }, String(set.tenants.length))),
    set.tenants.length === 0
      ? h('p', { class: 'empty' }, 'No tenants: the set has no inputs.')
      : dataTable({
          caption: `Tenants of ${set.name}`,
          columns: [{ label: 'Input' }, { label: 'Client' }, { label: 'State' }, { label: 'Wave', class: 'num' }, { label: 'Applied version' }],
          rows: set.tenants.map((t) => ({
            attrs: { dataset: { key: t.input, input: t.input, state: t.state } },
            cells: [
              h('span', { class: 'mono' }, t.input),
              t.clientId ? h('a', { href: `#/clients/${enc(t.clientId)}` }, t.clientId) : h('span', { class: 'muted' }, 'no client'),
              h('div', { class: 'name-cell' }, stateBadge(t.state), t.message ? h('span', { class: 'small wrap' }, t.message) : null),
              t.wave === null ? '—' : String(t.wave),
              shortDigest(t.digest),
            ],
          })),
        }));
}

/** @param {ClientSet} set */
function historyPanel(set) {
  return h('section', { class: 'panel', 'aria-labelledby': 'cs-history-h', id: 'clientset-history' },
    h('h2', { id: 'cs-history-h' }, 'Rendered versions'),
    h('p', { class: 'small muted' }, 'The last five digests of the rendered set, newest first.'),
    set.history.length === 0
      ? h('p', { class: 'empty' }, 'Not rendered yet.')
      : h('ol', { class: 'digest-history' }, set.history.map((v) => h('li', { dataset: { key: v.digest } },
          shortDigest(v.digest), ' ', h('span', { class: 'muted' }, fmtDate(v.at)), ' · ', `${v.tenants} tenant${v.tenants === 1 ? '' : 's'}`,
          v.digest === set.digest ? [' ', h('span', { class: 'tag' }, 'current')] : null))));
}

/**
 * The preview of a ClientSet manifest (YAML or JSON, pasted or loaded from a file): per tenant the
 * action (create, update, delete, unchanged, orphaned, invalid) and the field-level changes,
 * computed by the server's real apply path in a transaction it rolls back. Nothing is written.
 * @param {string | null} name
 */
export function previewPanel(name) {
  const text = h('textarea', { name: 'manifest', id: 'preview-manifest', rows: '14', spellcheck: 'false', autocomplete: 'off', class: 'mono code-input' });
  const file = h('input', { type: 'file', id: 'preview-file', name: 'file', accept: '.yaml,.yml,.json,application/json,application/yaml' });
  const result = h('div', { id: 'preview-result' });
  const submit = h('button', { type: 'submit', id: 'preview-submit' }, 'Preview');
  file.addEventListener('change', async () => {
    const f = file.files?.[0];
    if (f) text.value = await f.text();
  });
  const form = h('form', { class: 'panel', id: 'preview-form', 'aria-labelledby': 'preview-h', novalidate: true },
    h('h2', { id: 'preview-h' }, name ? `Preview a change to ${name}` : 'Preview a ClientSet'),
    h('p', { class: 'small muted' }, 'What applying the manifest would do to each tenant, computed by the server through the real apply path and rolled back: nothing is written.'),
    field('ClientSet manifest (YAML or JSON)', text, name ? `Paste the set's manifest (its file, e.g. sets/${name}.yaml) with your change.` : 'Paste a manifest of kind ClientSet.'),
    field('Or load a file', file),
    h('div', { class: 'actions' }, submit),
    result);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const source = text.value.trim();
    if (!source) {
      setFieldError(text, 'Paste a ClientSet manifest first.');
      text.focus();
      return;
    }
    setFieldError(text, null);
    submit.disabled = true;
    submit.textContent = 'Previewing…';
    render(result, h('div', { class: 'loading small', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), ' The server is computing the preview…'));
    try {
      /** @type {import('../types.js').Answer<ClientSetPreview>} */
      const r = await call('POST', '/v1/reconciler/clientsets/preview', asBody(source));
      render(result, previewResult(r.body));
      announce(`Preview of ${r.body.name}: ${summaryText(r.body.tenants)}.`);
    } catch (err) {
      setFieldError(text, 'The server refused this manifest: see the problems below.');
      render(result, errorNotice(err, 'The preview was refused.'));
    } finally {
      submit.disabled = false;
      submit.textContent = 'Preview';
    }
  });
  return form;
}

/**
 * JSON text is sent as JSON; anything else as YAML (the server parses it).
 * @param {string} source
 * @returns {{body: unknown, contentType?: string}}
 */
function asBody(source) {
  if (/^[{[]/.test(source)) {
    try {
      return { body: JSON.parse(source) };
    } catch {
      // not JSON after all: YAML (a flow mapping) is a superset
    }
  }
  return { body: source, contentType: 'application/yaml' };
}

/** @param {ClientSetPreview['tenants']} tenants */
function summaryText(tenants) {
  /** @param {string} a */
  const n = (a) => tenants.filter((t) => t.action === a).length;
  return ACTIONS.filter((a) => n(a)).map((a) => `${n(a)} ${a}`).join(', ') || 'no tenants';
}

/** @param {unknown} v */
function value(v) {
  return h('code', { class: 'wrap' }, JSON.stringify(v) ?? String(v));
}

/** @param {ClientSetPreview['tenants'][number]['changes'][number]} c */
function change(c) {
  const [object, ...rest] = c.path.split(' ');
  const where = [h('span', { class: 'mono' }, object), rest.length ? [' ', h('code', {}, rest.join(' '))] : null];
  if (!('from' in c)) return h('li', { class: 'added' }, where, ': added ', value(c.to));
  if (!('to' in c)) return h('li', { class: 'removed' }, where, ': removed (was ', value(c.from), ')');
  return h('li', {}, where, ': ', value(c.from), h('span', { 'aria-label': ' becomes ' }, ' → '), value(c.to));
}

/** @param {ClientSetPreview} p */
function previewResult(p) {
  return h('section', { class: 'preview-result', 'aria-labelledby': 'preview-result-h', id: 'preview-answer', tabindex: '-1' },
    h('h3', { id: 'preview-result-h' }, `Preview of ${p.name}`),
    h('p', { class: 'small' }, 'Would render digest ', shortDigest(p.digest), '. Nothing was written.'),
    p.reason ? notice('warn', h('strong', {}, 'The set would hold: '), p.reason) : null,
    h('ul', { class: 'state-counts', id: 'preview-summary' }, ACTIONS.map((a) => {
      const n = p.tenants.filter((t) => t.action === a).length;
      return n ? h('li', { dataset: { action: a } }, stateBadge(a, `${n} ${a}`)) : null;
    })),
    p.tenants.length === 0
      ? h('p', { class: 'empty' }, 'No tenants.')
      : dataTable({
          caption: `Preview of ${p.name} per tenant`,
          id: 'preview-table',
          columns: [{ label: 'Input' }, { label: 'Action' }, { label: 'Objects' }, { label: 'Changes' }],
          rows: p.tenants.map((t) => ({
            attrs: { dataset: { input: t.input, action: t.action } },
            cells: [
              h('span', { class: 'mono' }, t.input),
              stateBadge(t.action),
              t.objects.length ? h('ul', { class: 'plain small' }, t.objects.map((o) => h('li', { class: 'mono' }, o))) : h('span', { class: 'muted' }, '—'),
              h('div', {},
                t.problems?.length ? h('ul', { class: 'plain bad-text small problems' }, t.problems.map((x) => h('li', {}, x))) : null,
                t.changes.length ? h('ul', { class: 'changes small' }, t.changes.map(change)) : t.problems?.length ? null : h('span', { class: 'muted' }, 'No field changes')),
            ],
          })),
        }));
}
