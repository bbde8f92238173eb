import { ApiError, call, userPath } from '../api.js';
import { announce, field, h, notice, render, showProblems } from '../dom.js';
import { errorText, loadInto } from '../components/async-view.js';
import { deleteConnection } from './connections.js';
import { objectHref } from './object.js';

/** The fields the form edits, per vendor (what a Connection manifest says; the password apart). */
/** @type {Record<string, [string, string][]>} */
const FIELDS = {
  SNOWFLAKE: [['name', 'Name'], ['accountUrl', 'Account URL'], ['warehouse', 'Warehouse'], ['database', 'Database'], ['schema', 'Schema'], ['username', 'Username']],
  POSTGRESQL: [['name', 'Name'], ['host', 'Host'], ['port', 'Port'], ['database', 'Database'], ['schema', 'Schema'], ['username', 'Username']],
};

/**
 * Edit a connection (`#/connections/<ID>`): its manifest's fields, a password that is never
 * filled in (blank keeps the stored one), Save through the server's one write path, and Delete
 * (refused while anything uses it, the users listed).
 * @param {string} connectionId
 */
export function connectionEditPage(connectionId) {
  const box = h('div', { id: 'connection-edit' });
  const flash = h('div', { id: 'connection-flash', 'aria-live': 'polite' });
  loadInto(box, async () => {
    /** @type {import('../types.js').Answer<import('../types.js').ApiConnectionList>} */
    const listed = await call('GET', userPath('/v1/bi/admin/connections/'));
    const list = listed.body.connections;
    const c = list.find((x) => x.connectionId === connectionId);
    if (!c) throw new ApiError(404, null, `Connection ${connectionId} not found`);
    const key = c.manifestKey;
    const editable = typeof key === 'string' && key.startsWith('Connection/');
    /** @type {import('../types.js').Answer<import('../types.js').ApiObjectView> | null} */
    const read = editable ? await call('GET', `/v1/reconciler/objects/Connection/${encodeURIComponent(key.slice('Connection/'.length))}`) : null;
    const object = read ? read.body.object : null;
    return { c, object };
  }, (data) => form(data, flash), { what: `connection ${connectionId}` });
  return h('section', { 'aria-labelledby': 'connection-h' },
    h('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, h('a', { href: '#/connections' }, 'Connections'), ' / ', h('span', { class: 'mono' }, connectionId)),
    h('h1', { id: 'connection-h', class: 'wrap' }, `Connection ${connectionId}`),
    flash,
    box);
}

/**
 * @param {{c: import('../types.js').ApiConnectionSummary, object: import('../types.js').ApiObjectView['object'] | null}} data
 * @param {HTMLElement} flash
 */
function form({ c, object }, flash) {
  const heading = document.getElementById('connection-h');
  if (heading) heading.textContent = `Edit ${c.name || c.connectionId}`;
  const del = h('button', { type: 'button', class: 'danger', id: 'delete-connection' }, 'Delete connection');
  del.addEventListener('click', () => void deleteConnection(c, { flash, reload: async () => {}, after: () => { location.hash = '#/connections'; } }));
  if (!object) {
    return h('div', {},
      notice('warn', h('strong', {}, 'Not editable here. '), `This connection is defined by ${c.manifestKey ?? 'no manifest'}: change it there.`,
        c.manifestKey ? [' ', h('a', { href: objectHref(c.manifestKey) }, 'Open its manifest')] : null),
      h('div', { class: 'actions' }, del));
  }
  if (object.generatedBy) {
    return h('div', {}, notice('warn', h('strong', {}, 'Generated. '), `${object.generatedBy} generates this connection: change the ClientSet or its inputs.`), h('div', { class: 'actions' }, h('a', { class: 'button secondary', href: objectHref(object.key) }, 'Manifest and history')));
  }
  /** @type {Record<string, unknown>} */
  const spec = /** @type {Record<string, unknown> | undefined} */ (object.desired?.spec) ?? {};
  const vendor = String(spec.vendor ?? c.vendor);
  /** @type {Record<string, HTMLInputElement>} */
  const controls = {};
  const fields = (FIELDS[vendor] ?? FIELDS.SNOWFLAKE).map(([name, label]) => {
    const input = h('input', { type: name === 'port' ? 'number' : 'text', name, id: `conn-${name}`, autocomplete: 'off', value: spec[name] === undefined ? '' : String(spec[name]) });
    if (name === 'name') input.required = true;
    controls[name] = input;
    return field(label, input);
  });
  const credential = spec.passwordEnv
    ? `The password is read from the environment variable ${spec.passwordEnv}. Type one here to store it encrypted instead.`
    : spec.secretRef
      ? 'A password is stored (encrypted). Leave this blank to keep it; type a new one to replace it.'
      : 'No password is stored (trust authentication). Type one to store it encrypted.';
  const password = h('input', { type: 'password', name: 'password', id: 'conn-password', autocomplete: 'new-password', value: '' });
  controls.password = password;
  const summary = h('div', { id: 'connection-problems' });
  const save = h('button', { type: 'submit', id: 'save-connection' }, 'Save');
  const initial = Object.fromEntries(Object.entries(controls).map(([k, el]) => [k, el.value]));
  /** @param {SubmitEvent} e */
  const onSubmit = async (e) => {
    e.preventDefault();
    // Only what changed is sent: fields left out keep their value on the server.
    /** @type {Record<string, string | number>} */
    const body = {};
    for (const [k, el] of Object.entries(controls)) {
      if (k === 'password') continue;
      if (el.value !== initial[k]) body[k] = k === 'port' && el.value !== '' ? Number(el.value) : el.value;
    }
    if (password.value) body.password = password.value;
    save.setAttribute('aria-disabled', 'true');
    save.textContent = 'Saving…';
    try {
      /** @type {import('../types.js').Answer<import('../types.js').ApiConnectionTested>} */
      const r = await call('PATCH', userPath(`/v1/bi/admin/connections/${encodeURIComponent(c.connectionId)}/`), { body });
      password.value = '';
      render(summary);
      showProblems(Object.values(controls), []);
      Object.assign(initial, Object.fromEntries(Object.entries(controls).map(([k, el]) => [k, el.value])));
      const text = `Connection ${r.body.connection.name} saved.`;
      render(flash, notice('ok', text));
      announce(text);
    } catch (err) {
      const problems = err instanceof ApiError && err.status === 400
        ? err.problems.map((p) => ({ control: controls[p.path] ?? null, message: p.text }))
        : [{ control: null, message: errorText(err) }];
      const box = showProblems(Object.values(controls), problems);
      render(summary, box);
      box?.focus();
    } finally {
      save.removeAttribute('aria-disabled');
      save.textContent = 'Save';
    }
  };
  return h('div', {},
    h('p', { class: 'muted' }, `${vendor} connection, `, c.shared ? 'shared by every client' : c.owner ? `owned by ${c.owner}` : 'unowned', '. ', h('a', { href: objectHref(object.key) }, 'Manifest and history')),
    summary,
    h('form', { class: 'panel', id: 'connection-form', onsubmit: (e) => void onSubmit(e), novalidate: true },
      fields,
      field('Password', password, credential),
      h('div', { class: 'actions' }, save, h('a', { class: 'button secondary', href: '#/connections' }, 'Back to connections'))),
    h('div', { class: 'panel danger-zone' }, h('h2', {}, 'Delete'), h('p', { class: 'muted' }, 'Removes its manifest and the connection. Refused while a client, VDM, dashboard or pipeline uses it.'), del));
}
