import { call, errorText, getSession, setSession, whenSessionChanges, whenUnauthorized } from './api.js';
import { errorView, focusPage, h, loadingView, notice, render } from './dom.js';
import { clientDetailPage } from './pages/client.js';
import { clientsPage } from './pages/clients.js';
import { connectionsPage } from './pages/connections.js';
import { dashboardPage } from './pages/dashboard.js';
import { dashboardsPage } from './pages/dashboards.js';
import { manifestsPage } from './pages/manifests.js';
import { importPage } from './pages/import.js';
import { keysPage } from './pages/keys.js';
import { loginPage } from './pages/login.js';
import { memberClientPage, memberDashboardsPage, memberHomePage, memberKeysPage } from './pages/member.js';
import { objectPage } from './pages/object.js';
import { connectionEditPage } from './pages/connection-edit.js';
import { pipelinePage } from './pages/pipeline.js';
import { pipelinesPage } from './pages/pipelines.js';
import { runPage } from './pages/run.js';
import { usersPage } from './pages/users.js';
import { wizardPage } from './pages/wizard.js';
import { auditPage } from './pages/audit.js';
import { clientSetPage } from './pages/clientset.js';
import { clientSetsPage } from './pages/clientsets.js';
import { notifiersPage } from './pages/notifiers.js';
import { workersPage } from './pages/workers.js';
import { discardDraft } from './pages/wizard/draft.js';
import { mayLeaveFor } from './leave-guard.js';

/** @typedef {import('./types.js').ApiSettingsSession} Me */

/**
 * An element of index.html's frame (always there).
 * @param {string} id
 */
function frame(id) {
  const el = document.getElementById(id);
  if (!el) throw new Error(`index.html has no #${id}`);
  return el;
}

const main = frame('main');
const nav = frame('nav');
const who = frame('who');

/**
 * What the server says about the signed-in user (role decides whether settings are shown).
 * @type {Me | null}
 */
let me = null;

/** @typedef {(arg: string | undefined, query: URLSearchParams, me: Me) => Node | Promise<Node>} Route */

/** @type {Record<string, Route>} */
const ADMIN_ROUTES = {
  clients: (arg, query, me) => (arg ? clientDetailPage(decodeURIComponent(arg), query, me) : clientsPage(query)),
  dashboards: (arg, query) => (arg ? dashboardPage(decodeURIComponent(arg), query) : dashboardsPage(query)),
  manifests: (_arg, query, me) => manifestsPage(query, me),
  new: (_arg, query) => wizardPage(query),
  import: () => importPage(),
  keys: (_arg, _query, me) => keysPage(me),
  pipelines: (arg, query) => (arg ? pipelinePage(decodeURIComponent(arg)) : pipelinesPage(query)),
  runs: (arg) => (arg ? runPage(decodeURIComponent(arg)) : pipelinesPage(new URLSearchParams())),
  connections: (arg, query) => (arg ? connectionEditPage(decodeURIComponent(arg)) : connectionsPage(query)),
  objects: (arg, query, me) => (arg ? objectPage(decodeURIComponent(arg)) : manifestsPage(query, me)),
  users: () => usersPage(),
  clientsets: (arg) => (arg ? clientSetPage(decodeURIComponent(arg)) : clientSetsPage()),
  workers: () => workersPage(),
  audit: (_arg, query) => auditPage(query),
  notifiers: () => notifiersPage(),
};

/** A member's pages (their own tabs in member.js): the granted clients and their dashboards, read-only, and their API keys. */
/** @type {Record<string, Route>} */
const MEMBER_ROUTES = {
  home: (arg, query, me) => memberHomePage(me),
  clients: (arg, query, me) => (arg ? memberClientPage(decodeURIComponent(arg)) : memberHomePage(me)),
  dashboards: (arg, query) => memberDashboardsPage(arg ? decodeURIComponent(arg) : null, query),
  keys: (_arg, _query, me) => memberKeysPage(me),
};

/** Pages that belong under another navigation entry (a run is a pipeline's). */
/** @type {Record<string, string>} */
const NAV_OF = { runs: 'pipelines', objects: 'manifests' };

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, qs] = raw.split('?');
  const [page, arg] = path.split('/');
  return { page: page || '', arg, query: new URLSearchParams(qs ?? '') };
}

/** @returns {Promise<Me | null>} */
async function loadMe() {
  const s = getSession();
  if (!s) return null;
  /** @type {import('./types.js').Answer<Me>} */
  const r = await call('GET', `/v1/settings/session/${encodeURIComponent(s.userId)}`);
  return r.body;
}

function chrome() {
  const signedIn = Boolean(me);
  who.hidden = !signedIn;
  nav.hidden = !(me && me.settings);
  frame('menu-toggle').hidden = nav.hidden;
  if (me) frame('who-name').textContent = `${me.username} (${me.role})`;
  const { page } = parseHash();
  for (const a of nav.querySelectorAll('a')) {
    if (a.dataset.nav === (NAV_OF[page] ?? page)) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

/** Where a signed-out visitor wanted to go: they land there after the login. */
const NEXT_KEY = 'bi-controller.next';
/** @type {string | null} */
let signedOutBecause = null;

function rememberTarget() {
  const target = location.hash;
  if (target && !target.startsWith('#/login')) sessionStorage.setItem(NEXT_KEY, target);
}

/** @param {string} fallback */
function takeTarget(fallback) {
  const target = sessionStorage.getItem(NEXT_KEY);
  sessionStorage.removeItem(NEXT_KEY);
  return target && target.startsWith('#/') && !target.startsWith('#/login') ? target : fallback;
}

/** Counts route() calls: a slow page that finishes after the visitor moved on is dropped. */
let routeSeq = 0;
/** The address of the page on screen: where a page that refuses to be left (leave-guard.js) stays. */
let shownHash = '';

async function route() {
  const seq = ++routeSeq;
  const { page, arg, query } = parseHash();
  closeMenu(false);
  // A page with unsaved work asks first; meanwhile the address is the page's own (no hashchange, nothing redrawn).
  const asked = location.hash;
  const stay = () => history.replaceState(null, '', shownHash || '#/');
  if (!(await mayLeaveFor(page, { stay, go: () => history.replaceState(null, '', asked) }))) return;
  if (seq !== routeSeq) return;
  shownHash = location.hash;
  if (!getSession()) me = null;
  if (getSession() && !me) {
    try {
      me = await loadMe();
    } catch {
      me = null;
      setSession(null, signedOutBecause);
    }
  }
  if (seq !== routeSeq) return;
  chrome();
  if (!me) {
    if (page !== 'login') {
      rememberTarget();
      location.replace('#/login');
      return;
    }
    // The reason stays until a sign-in: a second request refused at the same moment (a page loads
    // several at once) draws the login page again, and must not draw it without the reason.
    const why = signedOutBecause;
    show(h('div', {}, why ? notice('warn', why) : null, loginPage(async (session) => {
      signedOutBecause = null;
      setSession(session);
      me = await loadMe();
      location.hash = takeTarget(me?.settings ? '#/clients' : '#/home');
    })));
    return;
  }
  // A member has their own pages (granted clients, read-only, and their keys); an admin the settings.
  const handler = (me.settings ? ADMIN_ROUTES : MEMBER_ROUTES)[page];
  if (!handler) {
    location.replace(takeTarget(me.settings ? '#/clients' : '#/home'));
    return;
  }
  // The previous page goes at once: a loading state, then the page or its error with Retry.
  render(main, loadingView('Loading…', { id: 'page-loading' }));
  main.setAttribute('aria-busy', 'true');
  let view;
  try {
    view = await handler(arg, query, me);
  } catch (err) {
    if (seq !== routeSeq) return;
    view = errorView('This page could not be loaded', errorText(err), () => void route());
  } finally {
    main.removeAttribute('aria-busy');
  }
  if (seq !== routeSeq) return;
  show(view);
}

/**
 * Puts a view on screen and moves focus to its heading (or its autofocus field).
 * @param {Node} view
 */
function show(view) {
  render(main, view);
  focusPage();
}

whenUnauthorized((why) => {
  const alreadyOut = me === null && location.hash.startsWith('#/login') && signedOutBecause === (why ?? null);
  me = null;
  signedOutBecause = why ?? null;
  setSession(null, signedOutBecause);
  if (alreadyOut) return;
  if (!location.hash.startsWith('#/login')) {
    rememberTarget();
    location.hash = '#/login';
  } else void route();
});

// Another tab signed in (a new token for every tab) or out.
whenSessionChanges((session, why) => {
  me = null;
  signedOutBecause = session ? null : why;
  if (!session) {
    rememberTarget();
    if (!location.hash.startsWith('#/login')) location.hash = '#/login';
    else void route();
  } else if (location.hash.startsWith('#/login')) location.hash = takeTarget('#/clients');
  else void loadMe().then((m) => { me = m; chrome(); }).catch(() => void route());
});

frame('logout').addEventListener('click', async () => {
  try {
    await call('POST', '/v1/auth/logout', { body: {}, expect: [200, 204, 401, 403] });
  } finally {
    // Signing out on purpose ends the wizard's draft too (another person may sign in in this tab).
    discardDraft();
    setSession(null);
    me = null;
    signedOutBecause = null;
    location.hash = '#/login';
  }
});

// The navigation on a narrow screen: a menu button (aria-expanded) shows it; Escape or a choice closes it.
const menu = frame('menu-toggle');
/** @param {boolean} returnFocus */
function closeMenu(returnFocus) {
  if (menu.getAttribute('aria-expanded') !== 'true') return;
  menu.setAttribute('aria-expanded', 'false');
  nav.classList.remove('open');
  if (returnFocus) menu.focus();
}
menu.addEventListener('click', () => {
  const open = menu.getAttribute('aria-expanded') !== 'true';
  menu.setAttribute('aria-expanded', String(open));
  nav.classList.toggle('open', open);
  if (open) nav.querySelector('a')?.focus();
});
nav.addEventListener('click', (e) => {
  if (e.target instanceof HTMLAnchorElement) closeMenu(false);
});
document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && menu.getAttribute('aria-expanded') === 'true') {
    e.preventDefault();
    closeMenu(true);
  }
});

window.addEventListener('hashchange', () => void route());
void route();
