import { call, userPath } from '../api.js';
import { confirmDialog, field, fmtDate, h, notice, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { emptyState, errorText, loadInto } from '../components/async-view.js';
import { keyState } from './keys.js';

/**
 * Every user's API keys (admins, `GET /v1/bi/admin/api-keys/{userId}`): whose, for which client,
 * last use, state; any working key can be revoked. `names()`: client ID → display name.
 * The section reloads on a `reload` event (a user deleted: their keys were revoked).
 * @param {() => Map<string, string>} names
 */
export function allKeysSection(names) {
  const box = h('div', { id: 'all-keys-list' });
  const status = h('div', { 'aria-live': 'polite', id: 'all-keys-status' });
  const filter = { user: '', state: 'active' };
  /** @type {import('../types.js').ApiOwnedApiKeyInfo[]} */
  let keys = [];
  const userSelect = h('select', { name: 'key-user' });
  const stateSelect = h('select', { name: 'key-state' }, [['active', 'Working'], ['', 'All'], ['revoked', 'Revoked'], ['expired', 'Expired']].map(([v, l]) => h('option', { value: v, selected: v === filter.state }, l)));
  const paint = () => {
    const users = [...new Map(keys.map((k) => [k.userId, k.username])).entries()].sort((a, b) => a[1].localeCompare(b[1]));
    render(userSelect, h('option', { value: '' }, 'Every user'), users.map(([id, name]) => h('option', { value: id, selected: id === filter.user }, name)));
    const rows = keys.filter((k) => (!filter.user || k.userId === filter.user) && (!filter.state || keyState(k) === filter.state));
    if (!keys.length) return emptyState('No API keys yet', 'Keys appear here when a user creates one under API keys.');
    if (!rows.length) return emptyState('No key matches', 'Change the user or state filter.');
    /** @param {string | null} clientId */
    const label = (clientId) => (clientId ? `${names().get(clientId) ?? clientId} (${clientId})` : 'All clients');
    return dataTable({
      caption: 'API keys of every user',
      id: 'all-key-table',
      columns: [{ label: 'User' }, { label: 'Key' }, { label: 'Client' }, { label: 'Last used' }, { label: 'State' }, { label: 'Actions', hideLabel: true }],
      rows: rows.map((k) => {
        const state = keyState(k);
        const actions = h('div', { class: 'row-actions' });
        if (state === 'active') {
          const revoke = h('button', { type: 'button', class: 'secondary danger-text', 'data-action': 'revoke', 'aria-label': `Revoke ${k.label} of ${k.username}` }, 'Revoke');
          revoke.addEventListener('click', async () => {
            const yes = await confirmDialog({
              title: `Revoke ${k.username}'s key?`,
              text: `"${k.label}" (${k.keyPrefix}…) stops working at once. This cannot be undone.`,
              confirmLabel: 'Revoke key',
              action: () => call('DELETE', userPath('/v1/api-keys/', `/${encodeURIComponent(k.keyId)}`)),
            });
            if (!yes) return;
            await reload();
            render(document.getElementById('all-keys-status') ?? status, notice('ok', `Key "${k.label}" of ${k.username} revoked.`));
            document.getElementById('all-keys-h')?.focus();
          });
          actions.append(revoke);
        }
        return {
          attrs: { dataset: { key: k.keyId, owner: k.username, state } },
          cells: [
            h('span', { class: 'strong' }, k.username),
            h('div', { class: 'name-cell' }, h('span', {}, k.label), h('span', { class: 'mono muted small' }, `${k.keyPrefix}… · ${k.keyId}`)),
            label(k.clientId),
            k.lastUsedAt ? fmtDate(k.lastUsedAt) : h('span', { class: 'muted' }, 'Never'),
            h('span', { class: `badge ${state === 'active' ? 'ok' : state === 'revoked' ? 'bad' : 'muted'}` }, state),
            actions,
          ],
        };
      }),
    });
  };
  const results = h('div', { id: 'all-keys-results' });
  const draw = () => h('div', {},
    h('form', { class: 'panel filters', role: 'search', 'aria-label': 'Filter API keys', onsubmit: (e) => e.preventDefault() },
      h('div', { class: 'grid2' }, field('User', userSelect), field('State', stateSelect))),
    render(results, paint()));
  const repaint = () => render(results, paint());
  userSelect.addEventListener('change', () => { filter.user = userSelect.value; repaint(); });
  stateSelect.addEventListener('change', () => { filter.state = stateSelect.value; repaint(); });
  const reload = loadInto(box, async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiOwnedApiKeyList>} */
    const r = await call('GET', userPath('/v1/bi/admin/api-keys/'));
    keys = r.body.keys ?? [];
    return keys;
  }, draw, { what: 'API keys' });
  const section = h('section', { 'aria-labelledby': 'all-keys-h', class: 'all-keys' },
    h('h2', { id: 'all-keys-h', tabindex: '-1' }, 'API keys of every user'),
    h('p', { class: 'muted' }, 'Revoke a key that leaked or is no longer used; its owner can create another under API keys.'),
    status,
    box);
  section.addEventListener('reload', () => void reload().catch((err) => render(status, notice('bad', errorText(err)))));
  return section;
}
