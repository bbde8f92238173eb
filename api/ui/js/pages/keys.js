import { call, errorText, userPath } from '../api.js';
import { confirmDialog, field, fmtDate, h, notice, render, setFieldError } from '../dom.js';

/**
 * API keys: create (label, expiry, client; shown once with Copy), list, revoke. `me` (the session
 * answer) decides the client field: a member's key must name one of their granted clients (the
 * server refuses any other), an admin's may name any client of the registry or none.
 * @param {import('../types.js').ApiSettingsSession} me
 */
export function keysPage(me) {
  const member = me?.role === 'member';
  const label = h('input', { type: 'text', name: 'label', required: true, maxlength: '200' });
  const expires = h('input', { type: 'date', name: 'expiresAt' });
  const tenant = member
    ? h('select', { name: 'clientId', required: true, 'aria-required': 'true' }, h('option', { value: '' }, '(choose a client)'), (me.clients ?? []).map((c) => h('option', { value: c }, c)))
    : h('input', { type: 'text', name: 'clientId', list: 'tenant-list', autocomplete: 'off' });
  const tenants = h('datalist', { id: 'tenant-list' });
  const created = h('div', { id: 'new-key', 'aria-live': 'polite' });
  const listBox = h('div', { id: 'key-list' });
  const submit = h('button', { type: 'submit' }, 'Create key');

  const load = async () => {
    listBox.setAttribute('aria-busy', 'true');
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiApiKeyList>} */
      const r = await call('GET', userPath('/v1/api-keys/'));
      render(listBox, keyTable(r.body.keys ?? [], load));
    } catch (err) {
      render(listBox, notice('bad', errorText(err)), h('button', { type: 'button', class: 'secondary', onclick: () => void load() }, 'Retry'));
    } finally {
      listBox.removeAttribute('aria-busy');
    }
  };
  // Client names: the member's granted ones get theirs in the select, an admin's datalist every client.
  /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiClientList>>} */
  const registry = call('GET', `${userPath('/v1/bi/admin/clients/')}?limit=1000`);
  registry
    .then((r) => {
      const clients = (r.body.data ?? []).filter((c) => c.status !== 'DELETED');
      if (!member) return render(tenants, clients.map((c) => h('option', { value: c.clientId }, c.clientName)));
      const names = new Map(clients.map((c) => [c.clientId, c.clientName]));
      for (const o of /** @type {NodeListOf<HTMLOptionElement>} */ (tenant.querySelectorAll('option[value]:not([value=""])'))) if (names.get(o.value)) o.textContent = `${names.get(o.value)} (${o.value})`;
    })
    .catch(() => {});

  const tenantField = member
    ? field('Client', tenant, (me.clients ?? []).length ? 'Required: the key may only import for this client (one of those granted to you).' : 'No client is granted to you yet: ask an administrator for one before creating a key.')
    : field('Client (optional)', tenant, 'A client ID of the registry: the key may only import for that client. Empty: every client.');
  const form = h('form', { class: 'panel', novalidate: true },
    h('h2', {}, 'Create a key'),
    h('div', { class: 'grid2' },
      field('Label', label),
      field('Expires on (optional)', expires, 'The key stops working at the end of this day (UTC).'),
      tenantField),
    member ? null : tenants,
    h('div', { class: 'actions' }, submit));
  tenant.addEventListener('change', () => tenant.value && setFieldError(tenant, null));
  label.addEventListener('input', () => label.value.trim() && setFieldError(label, null));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    /** @type {[HTMLInputElement | HTMLSelectElement, string | false][]} */
    const problems = [[label, !label.value.trim() && 'Label is required.'], [tenant, member && !tenant.value && 'Client is required: choose one of your granted clients.']];
    for (const [el, message] of problems) setFieldError(el, message || null);
    const first = problems.find(([, m]) => m);
    if (first) {
      first[0].focus();
      return;
    }
    submit.disabled = true;
    /** @type {import('../types.js').ApiApiKeyRequest} */
    const body = { label: label.value.trim() };
    if (expires.value) body.expiresAt = `${expires.value}T23:59:59.999Z`;
    if (tenant.value.trim()) body.clientId = tenant.value.trim().toUpperCase();
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiApiKeyCreated>} */
      const r = await call('POST', userPath('/v1/api-keys/'), { body, expect: [200, 201] });
      render(created, shownOnce(r.body));
      form.reset();
      await load();
      created.querySelector('input')?.focus();
    } catch (err) {
      // A refusal naming the client (unknown, not granted) shows at the client field.
      if (/client/i.test(errorText(err))) {
        setFieldError(tenant, errorText(err));
        tenant.focus();
      }
      render(created, notice('bad', h('strong', {}, 'Not created. '), errorText(err)));
    } finally {
      submit.disabled = false;
    }
  });
  void load();
  return h('section', { 'aria-labelledby': 'keys-h' },
    h('h1', { id: 'keys-h' }, 'API keys'),
    h('p', { class: 'muted' }, 'Keys authenticate the SDK endpoints (dashboard, pipeline and client imports). A key is shown only once, when it is created.'),
    form,
    created,
    h('h2', { id: 'keys-list-h', tabindex: '-1' }, 'Your keys'),
    listBox);
}

/** @param {import('../types.js').ApiApiKeyCreated} k */
function shownOnce(k) {
  const text = h('input', { type: 'text', readonly: true, value: k.apiKey, id: 'api-key-value', 'aria-label': 'New API key', class: 'mono' });
  const copied = h('span', { 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', id: 'copy-key' }, 'Copy');
  copy.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(k.apiKey);
    } catch {
      text.select();
      document.execCommand('copy');
    }
    copied.textContent = 'Copied.';
  });
  const box = h('div', { class: 'notice ok', role: 'status' },
    h('p', {}, h('strong', {}, `Key "${k.label}" created (${k.keyId}). `), 'Copy it now: it will not be shown again.'),
    h('div', { class: 'keybox' }, text, copy, h('button', { type: 'button', class: 'secondary', id: 'key-done', onclick: () => {
      box.remove();
      // Focus goes on to the list the key joined, not to the page's body.
      document.getElementById('keys-list-h')?.focus();
    } }, 'Done')),
    copied);
  return box;
}

/**
 * A key's state as shown: active, revoked or expired.
 * @param {Pick<import('../types.js').ApiApiKeyInfo, 'revoked' | 'expiresAt'>} k
 */
export function keyState(k) {
  if (k.revoked) return 'revoked';
  if (k.expiresAt && new Date(k.expiresAt).getTime() <= Date.now()) return 'expired';
  return 'active';
}

/**
 * @param {import('../types.js').ApiApiKeyInfo[]} keys
 * @param {() => Promise<void>} reload
 */
function keyTable(keys, reload) {
  if (!keys.length) return h('p', { class: 'panel' }, 'No keys yet.');
  /**
   * @param {import('../types.js').ApiApiKeyInfo} k
   * @param {string} state
   * @param {HTMLElement} actions
   */
  const cells = (k, state, actions) => [
    actions,
    h('td', { class: 'mono', 'data-label': 'Prefix' }, k.keyPrefix),
    h('td', { 'data-label': 'Label' }, k.label),
    h('td', { class: 'hide-narrow', 'data-label': 'Tenant' }, k.clientId ?? 'all'),
    h('td', { 'data-label': 'Last used' }, fmtDate(k.lastUsedAt)),
    h('td', { class: 'hide-narrow', 'data-label': 'Expires' }, k.expiresAt ? fmtDate(k.expiresAt) : 'never'),
    h('td', { 'data-label': 'State' }, h('span', { class: `badge ${state === 'active' ? 'ok' : state === 'revoked' ? 'bad' : 'muted'}` }, state)),
  ];
  return h('div', { class: 'table-wrap' },
    h('table', { class: 'stack fixed keys' },
      h('caption', { class: 'visually-hidden' }, 'API keys'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col', class: 'col-actions' }, h('span', { class: 'visually-hidden' }, 'Actions')),
        h('th', { scope: 'col' }, 'Prefix'), h('th', { scope: 'col' }, 'Label'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Tenant'),
        h('th', { scope: 'col' }, 'Last used'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Expires'), h('th', { scope: 'col' }, 'State'))),
      h('tbody', {}, keys.map((k) => {
        const state = keyState(k);
        const actions = h('td', { class: 'row-actions' });
        const row = h('tr', { dataset: { key: k.keyId, state }, tabindex: '-1' }, cells(k, state, actions));
        if (state === 'active') {
          const revoke = h('button', { type: 'button', class: 'secondary', 'data-action': 'revoke', 'aria-label': `Revoke ${k.label}` }, 'Revoke');
          revoke.addEventListener('click', async () => {
            const yes = await confirmDialog({ title: 'Revoke this key?', text: `"${k.label}" (${k.keyPrefix}…) stops working at once. This cannot be undone.`, confirmLabel: 'Revoke key' });
            if (!yes) return;
            revoke.disabled = true;
            try {
              await call('DELETE', userPath('/v1/api-keys/', `/${encodeURIComponent(k.keyId)}`));
              await reload();
              // Focus stays with the row acted on (now revoked).
              /** @type {HTMLElement | null} */ (document.querySelector(`#key-list tr[data-key="${CSS.escape(k.keyId)}"]`))?.focus();
            } catch (err) {
              render(actions, notice('bad', errorText(err)));
              revoke.disabled = false;
            }
          });
          actions.append(revoke);
        }
        return row;
      }))));
}
