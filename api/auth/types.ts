import type { Principal } from '../../controller/auth/principal.ts';

export type { Principal };

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}
