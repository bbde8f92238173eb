// The UI's one way to call the server: same origin, cookies, and the CTN header on every request.
//
// The session info ({userId, csrfToken}) lives in localStorage, shared by every tab of this origin:
// the LASID cookie already is, and the CSRF token only proves that a request comes from a page of
// this origin (another origin can read neither). A second tab or a deep link is signed in at once;
// a login in another tab replaces the token for every tab (`storage` event), and a 403
// "Invalid CSRF token" re-reads it once and retries before the page is sent to the login.

const KEY = 'bi-controller.session';

/** @typedef {import('./types.js').Session} Session */
/** @typedef {import('./types.js').ProblemText} ProblemText */

/** @returns {Session | null} */
function read() {
  try {
    const s = JSON.parse(localStorage.getItem(KEY) ?? 'null');
    return s && typeof s.userId === 'string' && typeof s.csrfToken === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function getSession() {
  return read();
}

/** Why the session ended, for every tab: the tab that found out tells the others. */
const REASON_KEY = 'bi-controller.signed-out-because';

/**
 * Stores a session, or ends it (`why`: the reason every tab's login page shows).
 * @param {Session | null} s
 * @param {string | null} [why]
 */
export function setSession(s, why = null) {
  if (s) {
    localStorage.removeItem(REASON_KEY);
    localStorage.setItem(KEY, JSON.stringify({ userId: s.userId, csrfToken: s.csrfToken }));
  } else {
    if (why) localStorage.setItem(REASON_KEY, why);
    else localStorage.removeItem(REASON_KEY);
    localStorage.removeItem(KEY);
  }
}

/**
 * Calls `fn(session | null, why | null)` when another tab signs in or out.
 * @param {(session: Session | null, why: string | null) => void} fn
 */
export function whenSessionChanges(fn) {
  window.addEventListener('storage', (e) => {
    if (e.key === KEY || e.key === null) fn(read(), localStorage.getItem(REASON_KEY));
  });
}

export class ApiError extends Error {
  /**
   * @param {number} status the answer's status (0: the server could not be reached)
   * @param {import('./types.js').ErrorAnswer | null} body the answer's JSON body, when it had one
   * @param {string} [message] the text to show; by default the body's `error` or `message`
   */
  constructor(status, body, message) {
    super(message ?? ((body && (body.error || body.message)) || `HTTP ${status}`));
    this.status = status;
    this.body = body;
  }

  /**
   * The problems of a 400, each with its field path: the body's structured `problems` ({path,
   * message}, docs/api.md "Error bodies"); for an answer without them (a step's `<step>: a; b`),
   * the paths read from the text's parts (`clientName must be ...` → {path: 'clientName', text}).
   * `text` is the whole sentence, path first, as the summary shows it.
   * @returns {ProblemText[]}
   */
  get problems() {
    const structured = Array.isArray(this.body?.problems) ? this.body.problems.filter((p) => p && typeof p.message === 'string') : [];
    if (structured.length) return structured.map((p) => ({ path: String(p.path ?? ''), text: p.path ? `${p.path} ${p.message}` : p.message }));
    const text = String(this.body?.error ?? '').replace(/^(Validation failed|[a-z ]+):\s*/, '');
    return text ? text.split('; ').map((t) => ({ path: /^([A-Za-z_][\w.[\]]*)\b/.exec(t)?.[1] ?? '', text: t })) : [];
  }
}

/** @type {(why: string) => void} */
let onUnauthorized = () => {};
/**
 * Called when the server says the session is gone (401, or a CSRF token no tab has): back to the login page.
 * @param {(why: string) => void} fn
 */
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

const CSRF_REFUSED = 'Invalid CSRF token';

/** Reason phrases of the statuses a proxy answers with (HTTP/2 sends none). */
/** @type {Record<number, string>} */
const REASONS = { 400: 'Bad Request', 404: 'Not Found', 408: 'Request Timeout', 413: 'Payload Too Large', 429: 'Too Many Requests', 500: 'Internal Server Error', 502: 'Bad Gateway', 503: 'Service Unavailable', 504: 'Gateway Timeout' };

/**
 * A readable text for an answer that is not the API's JSON (a proxy's HTML error page, an empty body).
 * @param {Response} res
 */
function plainAnswer(res) {
  const reason = res.statusText || REASONS[res.status] || '';
  return `The server answered ${res.status}${reason ? ` ${reason}` : ''}${res.status >= 500 ? '. Try again in a moment.' : '.'}`;
}

/**
 * @param {string} method
 * @param {string} path
 * @param {unknown} body
 * @param {Session | null} session
 * @param {string | undefined} contentType
 * @returns {Promise<{res: Response, data: any, plain: string | null}>} `data`: the JSON body as parsed (its shape is the caller's to name)
 */
async function send(method, path, body, session, contentType) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (session) headers.CTN = session.csrfToken;
  if (body !== undefined) headers['content-type'] = contentType ?? 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined || contentType ? /** @type {BodyInit | undefined} */ (body) : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, null, `The server could not be reached (${err instanceof Error ? err.message : String(err)}). Check the connection and try again.`);
  }
  const text = await res.text();
  let data;
  let plain = null;
  const json = /json/i.test(res.headers.get('content-type') ?? '');
  try {
    data = text ? JSON.parse(text) : null;
    if (!json && (data === null || typeof data !== 'object')) throw new Error('not the API');
  } catch {
    data = null;
    plain = plainAnswer(res);
  }
  return { res, data, plain };
}

/**
 * Calls the API. Resolves `{status, body}` for every answer the caller may want to handle
 * (pass `expect` with the accepted statuses), throws ApiError otherwise. With `contentType`, `body`
 * is sent as it is (a YAML text), not as JSON.
 *
 * The body's type is the caller's to name, from the generated schema types (types.d.ts):
 * a JSDoc `@type {Answer<ApiClientList>}` on the constant that awaits the call (or
 * `@type {Promise<Answer<…>>}` on the promise) infers `T`; unnamed, the body is `unknown`.
 * @template [T=unknown]
 * @param {string} method
 * @param {string} path
 * @param {{body?: unknown, expect?: readonly number[], contentType?: string}} [options]
 * @returns {Promise<import('./types.js').Answer<T>>}
 */
export async function call(method, path, { body, expect, contentType } = {}) {
  const sent = getSession();
  let { res, data, plain } = await send(method, path, body, sent, contentType);
  if (res.status === 403 && data?.error === CSRF_REFUSED) {
    // Another tab signed in again: its token is ours too. Retry once with it.
    const now = getSession();
    if (now && (!sent || now.csrfToken !== sent.csrfToken)) ({ res, data, plain } = await send(method, path, body, now, contentType));
    if (res.status === 403 && data?.error === CSRF_REFUSED) {
      onUnauthorized('Your session changed in another window: sign in again.');
      throw new ApiError(403, data, 'Your session changed in another window: sign in again.');
    }
  }
  if (res.status === 401 && !path.startsWith('/v1/auth/login')) {
    onUnauthorized('Your session has ended: sign in again.');
    throw new ApiError(401, data, 'Your session has ended: sign in again.');
  }
  const ok = expect ? expect.includes(res.status) : res.ok;
  if (plain !== null && (!ok || res.status >= 400)) throw new ApiError(res.status, null, plain);
  if (!ok) throw new ApiError(res.status, data);
  return { status: res.status, body: data };
}

/**
 * Path of an S endpoint for the signed-in user: `/v1/api-keys/` → `/v1/api-keys/U2026A00001`.
 * @param {string} prefix
 * @param {string} [suffix]
 */
export function userPath(prefix, suffix = '') {
  const s = getSession();
  return `${prefix}${encodeURIComponent(s ? s.userId : '')}${suffix}`;
}

/**
 * The text of any error for a person: the API's message, or what went wrong.
 * @param {unknown} err
 */
export function errorText(err) {
  return err instanceof ApiError ? err.message : err instanceof Error ? err.message : String(err);
}
