// The UI's one way to call the server: same origin, cookies, and the CTN header on every request.

const KEY = 'bi-controller.session';

export function getSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) ?? 'null');
    return s && typeof s.userId === 'string' && typeof s.csrfToken === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function setSession(s) {
  if (s) sessionStorage.setItem(KEY, JSON.stringify(s));
  else sessionStorage.removeItem(KEY);
}

export class ApiError extends Error {
  constructor(status, body) {
    super((body && (body.error || body.message)) || `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

let onUnauthorized = () => {};
/** Called when the server says the session is gone (401): back to the login page. */
export function whenUnauthorized(fn) {
  onUnauthorized = fn;
}

/**
 * Calls the API. Resolves `{status, body}` for every answer the caller may want to handle
 * (pass `expect` with the accepted statuses), throws ApiError otherwise.
 */
export async function call(method, path, { body, expect } = {}) {
  const s = getSession();
  const headers = { accept: 'application/json' };
  if (s) headers.CTN = s.csrfToken;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res;
  try {
    res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    throw new ApiError(0, { error: `The server could not be reached (${err.message})` });
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    data = { error: text.slice(0, 300) };
  }
  if (res.status === 401 && !path.startsWith('/v1/auth/login')) {
    onUnauthorized();
    throw new ApiError(401, data);
  }
  const ok = expect ? expect.includes(res.status) : res.ok;
  if (!ok) throw new ApiError(res.status, data);
  return { status: res.status, body: data };
}

/** Path of an S endpoint for the signed-in user: `/v1/api-keys/` → `/v1/api-keys/U2026A00001`. */
export function userPath(prefix, suffix = '') {
  const s = getSession();
  return `${prefix}${encodeURIComponent(s ? s.userId : '')}${suffix}`;
}
