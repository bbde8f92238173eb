/** A thin HTTP client for the product's API, as a browser or an SDK user calls it. */

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body is not JSON. */
  json: unknown;
  text: string;
  ms: number;
}

export interface Session {
  userId: string;
  csrfToken: string;
  cookie: string;
  /** Headers for an S endpoint. */
  headers: Record<string, string>;
}

export async function request(
  url: string,
  opts: { method?: string; headers?: Record<string, string>; body?: unknown; rawBody?: string | Uint8Array } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | Uint8Array | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  const t0 = performance.now();
  const res = await fetch(url, { method: opts.method ?? (body === undefined ? 'GET' : 'POST'), headers, body: body as BodyInit | undefined });
  const text = await res.text();
  const ms = performance.now() - t0;
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text, ms };
}

/** `POST /v1/auth/login` → session cookie and CSRF token. */
export async function login(base: string, username: string, password: string): Promise<Session> {
  const res = await request(`${base}/v1/auth/login`, { body: { username, password } });
  if (res.status !== 200) throw new Error(`login as ${username} answered ${res.status} ${res.text}`);
  const { userId, csrfToken } = res.json as { userId: string; csrfToken: string };
  const cookie = res.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .filter((c) => !c.endsWith('='))
    .join('; ');
  return { userId, csrfToken, cookie, headers: { cookie, ctn: csrfToken } };
}

/** `POST /v1/api-keys/{userId}` → the plaintext key (shown once) and its ID. */
export async function createApiKey(base: string, session: Session, label = 'bench'): Promise<{ apiKey: string; keyId: string }> {
  const res = await request(`${base}/v1/api-keys/${session.userId}`, { body: { label }, headers: session.headers });
  if (res.status !== 200 && res.status !== 201) throw new Error(`create API key answered ${res.status} ${res.text}`);
  const { apiKey, keyId } = res.json as { apiKey: string; keyId: string };
  return { apiKey, keyId };
}

export const bearer = (apiKey: string): Record<string, string> => ({ authorization: `Bearer ${apiKey}` });

/** Whether a route exists in this build: anything but the JSON "Route … not found" 404. */
export async function routeExists(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<boolean> {
  const res = await request(`${base}${path}`, { method, headers, ...(method === 'GET' ? {} : { body: {} }) });
  return !(res.status === 404 && /^Route /.test(String((res.json as { error?: unknown } | undefined)?.error ?? '')));
}
