/** Who is calling: set on the request by the API-key or the session guard. */
export interface Principal {
  userId: string;
  username: string;
  role: 'admin' | 'member';
  via: 'apiKey' | 'session';
  /** API key calls: the key's ID and its tenant scope (a clientId), when it has one. */
  keyId?: string;
  clientScope?: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}
