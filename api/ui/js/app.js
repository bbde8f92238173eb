import { call, getSession, setSession, whenUnauthorized } from './api.js';
import { h, render } from './dom.js';
import { clientDetailPage } from './pages/client.js';
import { clientsPage } from './pages/clients.js';
import { importPage } from './pages/import.js';
import { keysPage } from './pages/keys.js';
import { loginPage } from './pages/login.js';
import { wizardPage } from './pages/wizard.js';

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');

/** What the server says about the signed-in user (role decides whether settings are shown). */
let me = null;

const ADMIN_ROUTES = {
  clients: (arg, query) => (arg ? clientDetailPage(decodeURIComponent(arg)) : clientsPage(query)),
  new: () => wizardPage(),
  import: () => importPage(),
  keys: () => keysPage(),
};

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs] = raw.split('?');
  const [page, arg] = path.split('/');
  return { page: page || '', arg, query: new URLSearchParams(qs ?? '') };
}

async function loadMe() {
  const s = getSession();
  if (!s) return null;
  const r = await call('GET', `/v1/settings/session/${encodeURIComponent(s.userId)}`);
  return r.body;
}

function chrome() {
  const signedIn = Boolean(me);
  who.hidden = !signedIn;
  nav.hidden = !(signedIn && me.settings);
  if (signedIn) document.getElementById('who-name').textContent = `${me.username} (${me.role})`;
  const { page } = parseHash();
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.nav === page) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

function memberHome() {
  return h('section', { class: 'panel', id: 'member-home' },
    h('h1', {}, `Signed in as ${me.username}`),
    h('p', {}, 'Settings (clients, onboarding and API keys) are available to administrators only.'),
    h('p', { class: 'muted' }, 'Ask an administrator if you need access.'));
}

async function route() {
  const { page, arg, query } = parseHash();
  if (!getSession()) me = null;
  if (getSession() && !me) {
    try {
      me = await loadMe();
    } catch {
      me = null;
      setSession(null);
    }
  }
  chrome();
  let view;
  if (!me) {
    if (page !== 'login') {
      location.replace('#/login');
      return;
    }
    view = loginPage(async (session) => {
      setSession(session);
      me = await loadMe();
      location.hash = me.settings ? '#/clients' : '#/home';
    });
  } else if (!me.settings) {
    if (page !== 'home') {
      location.replace('#/home');
      return;
    }
    view = memberHome();
  } else {
    const handler = ADMIN_ROUTES[page];
    if (!handler) {
      location.replace('#/clients');
      return;
    }
    view = await handler(arg, query, me);
  }
  render(main, view);
  const heading = main.querySelector('h1');
  document.title = `${heading ? heading.textContent + ' · ' : ''}bi-controller`;
  (main.querySelector('[autofocus]') ?? main).focus({ preventScroll: true });
}

whenUnauthorized(() => {
  setSession(null);
  me = null;
  if (!location.hash.startsWith('#/login')) location.hash = '#/login';
});

document.getElementById('logout').addEventListener('click', async () => {
  try {
    await call('POST', '/v1/auth/logout', { body: {}, expect: [200, 204, 401, 403] });
  } finally {
    setSession(null);
    me = null;
    location.hash = '#/login';
  }
});

window.addEventListener('hashchange', () => void route());
void route();
