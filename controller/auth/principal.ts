/** Who is calling: set on each request by the API-key or the session guard, handed to every use case. */
export interface Principal {
  userId: string;
  username: string;
  role: 'admin' | 'member';
  via: 'apiKey' | 'session';
  /** API key calls: the key's ID and its tenant scope (a clientId), when it has one. */
  keyId?: string;
  clientScope?: string;
}
