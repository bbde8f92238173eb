import { ApiError, call, errorText } from '../api.js';
import { field, h, notice } from '../dom.js';

/** @param {(session: import('../types.js').Session) => Promise<void>} onSignedIn */
export function loginPage(onSignedIn) {
  const username = h('input', { type: 'text', name: 'username', autocomplete: 'username', required: true, autofocus: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const status = h('div');
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h('form', { class: 'panel login', 'aria-labelledby': 'login-h' },
    h('h1', { id: 'login-h' }, 'Sign in'),
    field('Username', username),
    field('Password', password),
    status,
    h('div', { class: 'actions' }, submit));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    submit.disabled = true;
    status.replaceChildren();
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiSessionTokens>} */
      const r = await call('POST', '/v1/auth/login', { body: { username: username.value.trim(), password: password.value }, expect: [200] });
      password.value = '';
      await onSignedIn({ userId: r.body.userId, csrfToken: r.body.csrfToken });
    } catch (err) {
      const msg = err instanceof ApiError && err.status === 401 ? 'Wrong username or password.' : errorText(err);
      status.replaceChildren(notice('bad', msg));
      password.focus();
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}
