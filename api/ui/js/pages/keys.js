import { ApiError, call, userPath } from '../api.js';
import { field, fmtDate, h, notice, render } from '../dom.js';

/** API keys: create (label, expiry, tenant scope; shown once with Copy), list, revoke. */
export function keysPage() {
  const label = h('input', { type: 'text', name: 'label', required: true, maxlength: '200' });
  const expires = h('input', { type: 'date', name: 'expiresAt' });
  const tenant = h('input', { type: 'text', name: 'clientId', list: 'tenant-list', autocomplete: 'off' });
  const tenants = h('datalist', { id: 'tenant-list' });
  const created = h('div', { id: 'new-key', 'aria-live': 'polite' });
  const listBox = h('div', { id: 'key-list' });
  const submit = h('button', { type: 'submit' }, 'Create key');

  const load = async () => {
    try {
      const r = await call('GET', userPath('/v1/api-keys/'));
      render(listBox, keyTable(r.body.keys ?? [], load));
    } catch (err) {
      render(listBox, notice('bad', err instanceof ApiError ? err.message : String(err)));
    }
  };
  call('GET', `${userPath('/v1/bi/admin/clients/')}?limit=1000&status=ACTIVE`)
    .then((r) => render(tenants, (r.body.data ?? []).map((c) => h('option', { value: c.clientId }, c.clientName))))
    .catch(() => {});

  const form = h('form', { class: 'panel', novalidate: true },
    h('h2', {}, 'Create a key'),
    h('div', { class: 'grid2' },
      field('Label', label),
      field('Expires on (optional)', expires, 'The key stops working at the end of this day (UTC).'),
      field('Tenant scope (optional)', tenant, 'A client ID: the key may only import for that client.')),
    tenants,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (!label.value.trim()) {
      render(created, notice('bad', 'Label is required.'));
      label.focus();
      return;
    }
    submit.disabled = true;
    const body = { label: label.value.trim() };
    if (expires.value) body.expiresAt = `${expires.value}T23:59:59.999Z`;
    if (tenant.value.trim()) body.clientId = tenant.value.trim().toUpperCase();
    try {
      const r = await call('POST', userPath('/v1/api-keys/'), { body, expect: [200, 201] });
      render(created, shownOnce(r.body));
      form.reset();
      await load();
      created.querySelector('input')?.focus();
    } catch (err) {
      render(created, notice('bad', err instanceof ApiError ? err.message : String(err)));
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
    h('h2', {}, 'Your keys'),
    listBox);
}

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
    h('div', { class: 'keybox' }, text, copy, h('button', { type: 'button', class: 'secondary', onclick: () => box.remove() }, 'Done')),
    copied);
  return box;
}

function keyState(k) {
  if (k.revoked) return 'revoked';
  if (k.expiresAt && new Date(k.expiresAt).getTime() <= Date.now()) return 'expired';
  return 'active';
}

function keyTable(keys, reload) {
  if (!keys.length) return h('p', { class: 'panel' }, 'No keys yet.');
  return h('div', { class: 'table-wrap' },
    h('table', {},
      h('caption', { class: 'visually-hidden' }, 'API keys'),
      h('thead', {}, h('tr', {},
        h('th', { scope: 'col' }, 'Prefix'), h('th', { scope: 'col' }, 'Label'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Tenant'),
        h('th', { scope: 'col' }, 'Last used'), h('th', { scope: 'col', class: 'hide-narrow' }, 'Expires'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Actions')))),
      h('tbody', {}, keys.map((k) => {
        const state = keyState(k);
        const cell = h('td', {});
        const row = h('tr', { dataset: { key: k.keyId, state } },
          h('td', { class: 'mono' }, k.keyPrefix), h('td', {}, k.label), h('td', { class: 'hide-narrow' }, k.clientId ?? 'all'),
          h('td', {}, fmtDate(k.lastUsedAt)), h('td', { class: 'hide-narrow' }, k.expiresAt ? fmtDate(k.expiresAt) : 'never'),
          h('td', {}, h('span', { class: `badge ${state === 'active' ? 'ok' : state === 'revoked' ? 'bad' : 'muted'}` }, state)), cell);
        const ask = () => {
          const yes = h('button', { type: 'button', class: 'danger', 'data-action': 'confirm-revoke' }, 'Revoke');
          const no = h('button', { type: 'button', class: 'secondary' }, 'Cancel');
          render(cell, h('span', { class: 'visually-hidden' }, `Revoke ${k.label}?`), yes, ' ', no);
          yes.focus();
          no.addEventListener('click', () => paint());
          yes.addEventListener('click', async () => {
            yes.disabled = true;
            try {
              await call('DELETE', userPath('/v1/api-keys/', `/${encodeURIComponent(k.keyId)}`));
              await reload();
            } catch (err) {
              render(cell, notice('bad', err.message));
            }
          });
        };
        const paint = () => render(cell, state === 'active' ? h('button', { type: 'button', class: 'secondary', 'data-action': 'revoke', 'aria-label': `Revoke ${k.label}`, onclick: ask }, 'Revoke') : null);
        paint();
        return row;
      }))));
}
