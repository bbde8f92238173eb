import type { FastifyReply, FastifyRequest } from 'fastify';

/** Cookie names of docs/contract/api.md §5.2. */
export const SESSION_COOKIE = 'LASID';
export const ACCESS_COOKIE = 'ATN';
export const REFRESH_COOKIE = 'RTN';
/** The refresh token only travels to the auth endpoints. */
export const REFRESH_PATH = '/v1/auth';

/** Reads one cookie from the request's Cookie header (first occurrence wins). */
export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() !== name) continue;
    const raw = part.slice(eq + 1).trim();
    try {
      return decodeURIComponent(raw);
    } catch {
      return raw;
    }
  }
  return undefined;
}

export interface CookieOptions {
  path?: string;
  expires?: Date;
  /** Secure only when the request came over https (directly or via a trusted proxy). */
  secure: boolean;
}

/** `name=value; Path=/; HttpOnly; SameSite=Strict[; Secure][; Expires=…]`. Values are URL-safe tokens. */
export function serializeCookie(name: string, value: string, opts: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${opts.path ?? '/'}`, 'HttpOnly', 'SameSite=Strict'];
  if (opts.secure) parts.push('Secure');
  if (opts.expires) parts.push(`Expires=${opts.expires.toUTCString()}`);
  return parts.join('; ');
}

export function isHttps(req: FastifyRequest): boolean {
  return req.protocol === 'https';
}

/** Appends Set-Cookie headers (Fastify keeps an array for repeated set-cookie). */
export function setCookies(reply: FastifyReply, cookies: string[]): void {
  const prev = reply.getHeader('set-cookie');
  const list = prev === undefined ? [] : Array.isArray(prev) ? prev.map(String) : [String(prev)];
  void reply.header('set-cookie', [...list, ...cookies]);
}
