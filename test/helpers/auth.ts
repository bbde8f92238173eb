import type { TestApp } from './runtime.ts';

export interface TestUser {
  userId: string;
  username: string;
  role: 'admin' | 'member';
}

export interface TestKey extends TestUser {
  apiKey: string;
  keyId: string;
  /** Headers for an A endpoint: { authorization: 'Bearer …' }. */
  headers: Record<string, string>;
}

export interface TestSession extends TestUser {
  csrfToken: string;
  /** Cookie header value carrying LASID (and ATN, RTN). */
  cookie: string;
  /** Headers for an S endpoint: { cookie, ctn }. */
  headers: Record<string, string>;
}

// Implemented by the authentication issue: create a user (in the store) and a key / a session for it.
export async function createUserWithKey(_t: TestApp, _opts: { role?: 'admin' | 'member'; clientId?: string; username?: string } = {}): Promise<TestKey> {
  throw new Error('createUserWithKey: authentication not implemented yet');
}

export async function loginAs(_t: TestApp, _opts: { role?: 'admin' | 'member'; username?: string } = {}): Promise<TestSession> {
  throw new Error('loginAs: authentication not implemented yet');
}
