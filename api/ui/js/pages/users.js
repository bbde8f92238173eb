import { call, getSession, userPath } from '../api.js';
import { announce, confirmDialog, field, fmtDate, h, notice, render } from '../dom.js';
import { dataTable } from '../components/data-table.js';
import { errorText, loadInto } from '../components/async-view.js';
import { statusBadge } from '../components/status-badge.js';

const usersPath = () => userPath('/v1/bi/admin/users/');
const userPathOf = (targetUserId) => userPath(`/v1/bi/admin/users/${encodeURIComponent(targetUserId)}/`);

/** Checkboxes of clients (a member sees only the checked ones); `checked`: the granted IDs. */
function clientPicker(clients, checked, legend) {
  const boxes = clients.map((c) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'clients', value: c.clientId, checked: checked.includes(c.clientId) }), h('span', {}, c.clientId, h('span', { class: 'muted small' }, ` ${c.clientName}`))));
  const set = h('fieldset', { class: 'client-picker' }, h('legend', {}, legend), clients.length ? h('div', { class: 'columns' }, boxes) : h('p', { class: 'muted' }, 'No clients onboarded yet.'));
  return { el: set, value: () => boxes.map((b) => b.querySelector('input')).filter((i) => i.checked).map((i) => i.value) };
}

/** Users: who may sign in, their role and granted clients; create, change access, disable/enable. */
export function usersPage() {
  const box = h('div', { id: 'users' });
  const formBox = h('div', { id: 'create-user' });
  const state = { users: [], clients: [] };
  const me = getSession()?.userId;
  const reload = loadInto(box, async () => {
    const [users, clients] = await Promise.all([call('GET', usersPath()), call('GET', `${userPath('/v1/bi/admin/clients/')}?limit=100&status=ACTIVE`)]);
    state.users = users.body.users;
    state.clients = clients.body.data ?? [];
    render(formBox, createForm(state.clients, reload));
    return state;
  }, () => table(state, me, reload), { what: 'users' });
  return h('section', { 'aria-labelledby': 'users-h' },
    h('div', { class: 'page-head' },
      h('div', {}, h('h1', { id: 'users-h' }, 'Users'), h('p', { class: 'muted lead' }, 'Admins manage everything. Members see only the clients granted to them, read-only, and their own API keys.'))),
    box,
    formBox);
}

function createForm(clients, reload) {
  const username = h('input', { type: 'text', name: 'username', required: true, autocomplete: 'off', maxlength: '64' });
  const password = h('input', { type: 'password', name: 'password', required: true, autocomplete: 'new-password', minlength: '12' });
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
      field('Password', password, 'At least 12 characters. Share it with the person over a safe channel.'),
      field('Role', role)),
    picker.el,
    h('div', { class: 'actions' }, submit),
    result);
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const missing = [[username, 'Username'], [password, 'Password']].filter(([el]) => !el.value.trim());
    for (const [el] of [[username], [password]]) el.setAttribute('aria-invalid', String(missing.some(([m]) => m === el)));
    if (missing.length) {
      render(result, notice('bad', `${missing.map(([, n]) => n).join(' and ')} ${missing.length > 1 ? 'are' : 'is'} required.`));
      missing[0][0].focus();
      return;
    }
    submit.disabled = true;
    try {
      const body = { username: username.value.trim(), password: password.value, role: role.value, ...(role.value === 'member' ? { clients: picker.value() } : {}) };
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

function table(state, me, reload) {
  const status = h('div', { id: 'users-status', 'aria-live': 'polite' });
  return h('div', {},
    status,
    dataTable({
      caption: 'Users',
      id: 'user-table',
      columns: [{ label: 'User' }, { label: 'Role' }, { label: 'Granted clients' }, { label: 'State' }, { label: 'Created' }, { label: 'Actions', hideLabel: true }],
      rows: state.users.map((u) => {
        const self = u.userId === me;
        const actions = h('div', { class: 'row-actions' });
        const edit = h('button', { type: 'button', class: 'secondary', 'data-action': 'edit', 'aria-label': `Change access of ${u.username}`, 'aria-expanded': 'false' }, 'Change access');
        const toggle = h('button', {
          type: 'button',
          class: u.disabled ? 'secondary' : 'secondary danger-text',
          'data-action': u.disabled ? 'enable' : 'disable',
          'aria-label': `${u.disabled ? 'Enable' : 'Disable'} ${u.username}`,
          disabled: self && !u.disabled,
          'aria-describedby': self ? `self-${u.userId}` : undefined,
        }, u.disabled ? 'Enable' : 'Disable');
        const editor = h('div', { class: 'editor', hidden: true });
        edit.addEventListener('click', () => {
          const open = editor.hidden;
          editor.hidden = !open;
          edit.setAttribute('aria-expanded', String(open));
          if (open) render(editor, accessEditor(u, state.clients, self, reload, () => edit.click()));
          editor.querySelector('select')?.focus();
        });
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
            await call('PATCH', userPathOf(u.userId), { body: { disabled: disabling } });
            announce(`${u.username} ${disabling ? 'disabled' : 'enabled'}`);
            await reload();
          } catch (err) {
            render(status, notice('bad', h('strong', {}, `Could not ${disabling ? 'disable' : 'enable'} ${u.username}. `), errorText(err)));
          }
        });
        render(actions, edit, toggle, self ? h('span', { class: 'hint', id: `self-${u.userId}` }, 'You cannot disable your own account; another admin can.') : null);
        return {
          attrs: { dataset: { user: u.username, state: u.disabled ? 'disabled' : 'active' } },
          cells: [
            h('div', { class: 'name-cell' }, h('span', { class: 'strong' }, u.username, self ? h('span', { class: 'tag you' }, 'you') : null), h('span', { class: 'mono muted small' }, u.userId)),
            statusBadge(u.role === 'admin' ? 'running' : 'pending', u.role),
            u.role === 'admin' ? h('span', { class: 'muted' }, 'All clients') : u.clients.length ? u.clients.map((c, i) => [i ? ', ' : '', h('a', { href: `#/clients/${encodeURIComponent(c)}` }, c)]) : h('span', { class: 'muted' }, 'None'),
            statusBadge(u.disabled ? 'disabled' : 'active', u.disabled ? 'Disabled' : 'Active'),
            h('span', { title: fmtDate(u.createdAt), class: 'nowrap' }, fmtDate(u.createdAt).slice(0, 10)),
            h('div', {}, actions, editor),
          ],
        };
      }),
    }));
}

function accessEditor(u, clients, self, reload, close) {
  const role = h('select', { name: 'role', disabled: self }, ['member', 'admin'].map((r) => h('option', { value: r, selected: r === u.role }, r)));
  const picker = clientPicker(clients, u.clients, `Clients granted to ${u.username}`);
  const result = h('div', { 'aria-live': 'polite' });
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
      await call('PATCH', userPathOf(u.userId), { body: { ...(self ? {} : { role: role.value }), clients: picker.value() } });
      announce(`Access of ${u.username} saved`);
      await reload();
    } catch (err) {
      render(result, notice('bad', h('strong', {}, 'Not saved. '), errorText(err)));
      save.disabled = false;
    }
  });
  return form;
}
