import { ApiError, call, getSession, userPath } from '../api.js';
import { announce, confirmDialog, field, fmtDate, h, notice, render, setFieldError } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { errorText, loadInto } from '../components/async-view.js';
import { statusBadge } from '../components/status-badge.js';
import { allKeysSection } from './people-keys.js';

/** @typedef {import('../types.js').ApiUserView} UserView */
/** @typedef {Pick<import('../types.js').ApiListedClient, 'clientId' | 'clientName'>} PickableClient */
/**
 * The page's state: the users and clients last read, the client names, and the editor to open again after a reload.
 * @typedef {{users: UserView[], clients: PickableClient[], names: Map<string, string>, reopen: {userId: string, editor: Editor} | null}} UsersState
 */
/** @typedef {'access' | 'password'} Editor */
/** @typedef {import('../types.js').Answer<import('../types.js').ApiUserWritten>} UserWrittenAnswer */

const usersPath = () => userPath('/v1/bi/admin/users/');
/**
 * @param {string} targetUserId
 * @param {string} [tail]
 */
const userPathOf = (targetUserId, tail = '') => userPath(`/v1/bi/admin/users/${encodeURIComponent(targetUserId)}/${tail}`);
/** The server's rule (controller/auth/users.ts MIN_PASSWORD_LENGTH): the hint and the field say the same. */
export const MIN_PASSWORD = 8;
const PASSWORD_HINT = `At least ${MIN_PASSWORD} characters.`;

/** A 409 of a write based on an older read of the user (another admin changed it meanwhile). */
/** @param {unknown} err */
const isStale = (err) => err instanceof ApiError && err.status === 409 && /changed by someone else/.test(err.message);

/** A client as a person reads it: its display name, with the ID after it. */
/**
 * @param {Map<string, string>} names
 * @param {string} clientId
 */
export function clientLabel(names, clientId) {
  const name = names.get(clientId);
  return name && name !== clientId ? `${name} (${clientId})` : clientId;
}

/** Checkboxes of clients (a member sees only the checked ones); `checked`: the granted IDs (kept even when not listed). */
/**
 * @param {PickableClient[]} clients
 * @param {string[]} checked
 * @param {string} legend
 */
function clientPicker(clients, checked, legend) {
  const listed = new Set(clients.map((c) => c.clientId));
  const all = [...clients, ...checked.filter((id) => !listed.has(id)).map((id) => ({ clientId: id, clientName: '' }))];
  const boxes = all.map((c) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'clients', value: c.clientId, checked: checked.includes(c.clientId) }), h('span', {}, c.clientName || c.clientId, c.clientName ? h('span', { class: 'muted small mono' }, ` ${c.clientId}`) : null)));
  const set = h('fieldset', { class: 'client-picker' }, h('legend', {}, legend), all.length ? h('div', { class: 'columns' }, boxes) : h('p', { class: 'muted' }, 'No clients onboarded yet.'));
  return { el: set, value: () => boxes.map((b) => b.querySelector('input')).filter((i) => i !== null && i.checked).map((i) => /** @type {HTMLInputElement} */ (i).value) };
}

/** Users: who may sign in, their role, granted clients and last login; create, change access, reset a password, disable, delete; every user's API keys. */
export function usersPage() {
  const box = h('div', { id: 'users' });
  const formBox = h('div', { id: 'create-user' });
  const keysBox = h('div', { id: 'all-keys' });
  /** @type {UsersState} */
  const state = { users: [], clients: [], names: new Map(), reopen: null };
  const me = getSession()?.userId;
  /** @type {() => Promise<void>} */
  const reload = loadInto(box, async () => {
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiUserList>>} */
    const listed = call('GET', usersPath());
    /** @type {Promise<import('../types.js').Answer<import('../types.js').ApiClientList>>} */
    const registry = call('GET', `${userPath('/v1/bi/admin/clients/')}?limit=1000`);
    const [users, clients] = await Promise.all([listed, registry]);
    state.users = users.body.users;
    state.clients = (clients.body.data ?? []).filter((c) => c.status !== 'DELETED');
    state.names = new Map((clients.body.data ?? []).map((c) => [c.clientId, c.clientName]));
    render(formBox, createForm(state.clients, reload));
    return state;
  }, () => table(state, me, reload), { what: 'users' });
  render(keysBox, allKeysSection(() => state.names));
  return h('section', { 'aria-labelledby': 'users-h' },
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', { id: 'users-h' }, 'Users'), h('p', { class: 'muted lead' }, 'Admins manage everything. Members see only the clients granted to them, read-only, and their own API keys.'))),
    box,
    formBox,
    keysBox);
}

/**
 * @param {PickableClient[]} clients
 * @param {() => Promise<void>} reload
 */
function createForm(clients, reload) {
  const username = h('input', { type: 'text', name: 'username', required: true, autocomplete: 'off', maxlength: '64' });
  const password = h('input', { type: 'password', name: 'password', required: true, autocomplete: 'new-password', minlength: String(MIN_PASSWORD) });
  const role = h('select', { name: 'role' }, h('option', { value: 'member' }, 'Member: granted clients, read-only'), h('option', { value: 'admin' }, 'Admin: everything'));
  const picker = clientPicker(clients, [], 'Granted clients (members)');
  const result = h('div', { 'aria-live': 'polite', id: 'create-user-result' });
  const submit = h('button', { type: 'submit' }, 'Create user');
  role.addEventListener('change', () => {
    picker.el.disabled = role.value === 'admin';
  });
  const form = h('form', { class: 'panel', novalidate: true },
    h('h2', {}, 'Create a user'),
    h('div', { class: 'grid2' },
      field('Username', username),
      field('Password', password, `${PASSWORD_HINT} Share it with the person over a safe channel.`),
      field('Role', role)),
    picker.el,
    h('div', { class: 'actions' }, submit),
    result);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    /** @type {[HTMLInputElement, string][]} */
    const fields = [[username, 'Username'], [password, 'Password']];
    const missing = fields.filter(([el]) => !el.value.trim());
    for (const [el] of [[username], [password]]) el.setAttribute('aria-invalid', String(missing.some(([m]) => m === el)));
    if (missing.length) {
      render(result, notice('bad', `${missing.map(([, n]) => n).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required.`));
      missing[0][0].focus();
      return;
    }
    if (password.value.length < MIN_PASSWORD) {
      password.setAttribute('aria-invalid', 'true');
      render(result, notice('bad', `Password: ${PASSWORD_HINT}`));
      password.focus();
      return;
    }
    submit.disabled = true;
    try {
      const body = { username: username.value.trim(), password: password.value, role: role.value, ...(role.value === 'member' ? { clients: picker.value() } : {}) };
      /** @type {UserWrittenAnswer} */
      const r = await call('POST', usersPath(), { body, expect: [201] });
      announce(`User ${r.body.user.username} created`);
      await reload();
      const after = document.getElementById('create-user-result');
      if (after) render(after, notice('ok', `User ${r.body.user.username} created (${r.body.user.userId}).`));
    } catch (err) {
      render(result, notice('bad', h('strong', {}, 'Not created. '), errorText(err)));
      submit.disabled = false;
    }
  });
  return form;
}

/** A refused stale write: what happened and a Reload that shows the user as it is now (the editor open again). */
/**
 * @param {unknown} err
 * @param {UserView} u
 * @param {UsersState} state
 * @param {() => Promise<void>} reload
 * @param {Editor | null} editor
 */
function stalePrompt(err, u, state, reload, editor) {
  const again = h('button', { type: 'button', 'data-action': 'reload-user' }, 'Reload');
  again.addEventListener('click', async () => {
    state.reopen = editor ? { userId: u.userId, editor } : null;
    await reload();
    const row = document.querySelector(`#user-table tr[data-user="${CSS.escape(u.username)}"]`);
    /** @type {HTMLElement | null | undefined} */ (row?.querySelector('.editor:not([hidden]) select, .editor:not([hidden]) input') ?? row?.querySelector('button'))?.focus();
  });
  return h('div', { class: 'notice warn', role: 'alert', dataset: { conflict: 'true' } },
    h('strong', {}, 'Not saved: someone else changed this user. '), errorText(err), ' ',
    h('div', { class: 'actions' }, again));
}

/**
 * @param {UsersState} state
 * @param {string | undefined} me
 * @param {() => Promise<void>} reload
 */
function table(state, me, reload) {
  const status = h('div', { id: 'users-status', 'aria-live': 'polite' });
  const reopen = state.reopen;
  state.reopen = null;
  const view = h('div', {},
    status,
    dataTable({
      caption: 'Users',
      id: 'user-table',
      columns: [{ label: 'User' }, { label: 'Role' }, { label: 'Granted clients' }, { label: 'State' }, { label: 'Last login' }, { label: 'Actions', hideLabel: true }],
      rows: state.users.map((u) => {
        const self = u.userId === me;
        const actions = h('div', { class: 'row-actions' });
        const editor = h('div', { class: 'editor', hidden: true });
        const edit = h('button', { type: 'button', class: 'secondary', 'data-action': 'edit', 'aria-label': `Change access of ${u.username}`, 'aria-expanded': 'false' }, 'Change access');
        const reset = h('button', { type: 'button', class: 'secondary', 'data-action': 'reset-password', 'aria-label': `Reset the password of ${u.username}`, 'aria-expanded': 'false' }, 'Reset password');
        const toggle = h('button', {
          type: 'button',
          class: u.disabled ? 'secondary' : 'secondary danger-text',
          'data-action': u.disabled ? 'enable' : 'disable',
          'aria-label': `${u.disabled ? 'Enable' : 'Disable'} ${u.username}`,
          disabled: self && !u.disabled,
          'aria-describedby': self ? `self-${u.userId}` : undefined,
        }, u.disabled ? 'Enable' : 'Disable');
        const remove = h('button', { type: 'button', class: 'secondary danger-text', 'data-action': 'delete', 'aria-label': `Delete ${u.username}`, disabled: self, 'aria-describedby': self ? `self-${u.userId}` : undefined }, 'Delete');
        /** One editor at a time under the row: the access editor or the password form. */
        /** @param {Editor} which */
        const openEditor = (which) => {
          const opening = editor.hidden || editor.dataset.which !== which;
          editor.hidden = !opening;
          editor.dataset.which = opening ? which : '';
          edit.setAttribute('aria-expanded', String(opening && which === 'access'));
          reset.setAttribute('aria-expanded', String(opening && which === 'password'));
          if (opening) render(editor, which === 'access' ? accessEditor(u, state, self, reload, () => openEditor('access')) : passwordForm(u, state, reload, () => openEditor('password')));
          /** @type {HTMLElement | null} */ (editor.querySelector('select, input'))?.focus();
        };
        edit.addEventListener('click', () => openEditor('access'));
        reset.addEventListener('click', () => openEditor('password'));
        if (reopen?.userId === u.userId) queueMicrotask(() => openEditor(reopen.editor));
        toggle.addEventListener('click', async () => {
          const disabling = !u.disabled;
          const yes = await confirmDialog({
            title: `${disabling ? 'Disable' : 'Enable'} ${u.username}?`,
            text: disabling ? `${u.username} is signed out at once and their API keys stop working until the account is enabled again.` : `${u.username} can sign in again and their API keys work again.`,
            confirmLabel: disabling ? 'Disable' : 'Enable',
            danger: disabling,
          });
          if (!yes) return;
          try {
            await call('PATCH', userPathOf(u.userId), { body: { disabled: disabling, version: u.version } });
            announce(`${u.username} ${disabling ? 'disabled' : 'enabled'}`);
            await reload();
          } catch (err) {
            render(status, isStale(err) ? stalePrompt(err, u, state, reload, null) : notice('bad', h('strong', {}, `Could not ${disabling ? 'disable' : 'enable'} ${u.username}. `), errorText(err)));
          }
        });
        remove.addEventListener('click', async () => {
          const yes = await confirmDialog({
            id: 'delete-user',
            title: `Delete ${u.username}?`,
            text: `${u.username} is signed out at once, their API keys are revoked and their grants removed. The audit log keeps what they did. This cannot be undone.`,
            confirmLabel: 'Delete user',
            typed: u.username,
            action: () => call('DELETE', userPathOf(u.userId)),
          });
          if (!yes) return;
          announce(`${u.username} deleted`);
          await reload();
          render(document.getElementById('users-status') ?? status, notice('ok', `${u.username} deleted; their API keys were revoked.`));
          document.getElementById('users-h')?.focus();
          document.querySelector('section.all-keys')?.dispatchEvent(new Event('reload'));
        });
        render(actions, edit, reset, toggle, remove, self ? h('span', { class: 'hint', id: `self-${u.userId}` }, 'You cannot disable your own account or delete it; another admin can.') : null);
        return {
          attrs: { dataset: { user: u.username, state: u.disabled ? 'disabled' : 'active', version: String(u.version) } },
          cells: [
            h('div', { class: 'name-cell' }, h('span', { class: 'strong' }, u.username, self ? h('span', { class: 'tag you' }, 'you') : null), h('span', { class: 'mono muted small' }, u.userId)),
            statusBadge(u.role === 'admin' ? 'running' : 'pending', u.role),
            u.role === 'admin' ? h('span', { class: 'muted' }, 'All clients') : u.clients.length ? u.clients.map((c, i) => [i ? ', ' : '', h('a', { href: `#/clients/${encodeURIComponent(c)}` }, clientLabel(state.names, c))]) : h('span', { class: 'muted' }, 'None'),
            statusBadge(u.disabled ? 'disabled' : 'active', u.disabled ? 'Disabled' : 'Active'),
            u.lastLoginAt ? h('span', { class: 'nowrap', title: fmtDate(u.lastLoginAt) }, fmtDate(u.lastLoginAt)) : h('span', { class: 'muted' }, 'Never'),
            h('div', {}, actions, editor),
          ],
        };
      }),
    }));
  return view;
}

/**
 * @param {UserView} u
 * @param {UsersState} state
 * @param {boolean} self
 * @param {() => Promise<void>} reload
 * @param {() => void} close
 */
function accessEditor(u, state, self, reload, close) {
  const role = h('select', { name: 'role', disabled: self }, ['member', 'admin'].map((r) => h('option', { value: r, selected: r === u.role }, r)));
  const picker = clientPicker(state.clients, u.clients, `Clients granted to ${u.username}`);
  const result = h('div', { 'aria-live': 'polite', class: 'editor-result' });
  const save = h('button', { type: 'submit', 'data-action': 'save' }, 'Save');
  const form = h('form', { class: 'access-editor', novalidate: true },
    field('Role', role, self ? 'You cannot remove your own admin role.' : undefined),
    picker.el,
    h('div', { class: 'actions' }, save, h('button', { type: 'button', class: 'secondary', onclick: close }, 'Close')),
    result);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    save.disabled = true;
    try {
      // The version read with the list: another admin's change since answers 409 instead of being overwritten.
      await call('PATCH', userPathOf(u.userId), { body: { ...(self ? {} : { role: role.value }), clients: picker.value(), version: u.version } });
      announce(`Access of ${u.username} saved`);
      await reload();
    } catch (err) {
      render(result, isStale(err) ? stalePrompt(err, u, state, reload, 'access') : notice('bad', h('strong', {}, 'Not saved. '), errorText(err)));
      save.disabled = false;
    }
  });
  return form;
}

/** An admin sets a new password for a user (who forgot theirs); their sessions end. */
/**
 * @param {UserView} u
 * @param {UsersState} state
 * @param {() => Promise<void>} reload
 * @param {() => void} close
 */
function passwordForm(u, state, reload, close) {
  const password = h('input', { type: 'password', name: 'new-password', required: true, autocomplete: 'new-password', minlength: String(MIN_PASSWORD) });
  const result = h('div', { 'aria-live': 'polite', class: 'editor-result' });
  const save = h('button', { type: 'submit', 'data-action': 'save-password' }, 'Set password');
  const form = h('form', { class: 'password-editor', novalidate: true },
    field(`New password for ${u.username}`, password, `${PASSWORD_HINT} ${u.username} is signed out everywhere and signs in with this one.`),
    h('div', { class: 'actions' }, save, h('button', { type: 'button', class: 'secondary', onclick: close }, 'Close')),
    result);
  password.addEventListener('input', () => password.value.length >= MIN_PASSWORD && setFieldError(password, null));
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    if (password.value.length < MIN_PASSWORD) {
      setFieldError(password, `Password: ${PASSWORD_HINT}`);
      password.focus();
      return;
    }
    setFieldError(password, null);
    save.disabled = true;
    try {
      /** @type {UserWrittenAnswer} */
      const r = await call('POST', userPathOf(u.userId, 'password/'), { body: { password: password.value, version: u.version } });
      announce(`Password of ${u.username} reset`);
      password.value = '';
      render(result, notice('ok', `Password of ${u.username} reset; their sessions ended.`));
      // The version moved: the next edit of this row names the new one.
      u.version = r.body.user.version;
    } catch (err) {
      render(result, isStale(err) ? stalePrompt(err, u, state, reload, 'password') : notice('bad', h('strong', {}, 'Not reset. '), errorText(err)));
    } finally {
      save.disabled = false;
    }
  });
  return form;
}
