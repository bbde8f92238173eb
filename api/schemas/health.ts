import { answer, route } from './common.ts';

export const healthSchemas = {
  liveness: route({
    method: 'GET',
    operationId: 'liveness',
    summary: 'Liveness: the process answers',
    tags: ['health'],
    auth: 'public',
    response: { 200: answer('Liveness', 'Alive') },
  }),
  readiness: route({
    method: 'GET',
    operationId: 'readiness',
    summary: 'Readiness: 200 after the first full sync',
    tags: ['health'],
    auth: 'public',
    response: { 200: answer('Readiness', 'Ready'), 503: answer('NotReady', 'The first full sync is still running') },
  }),
};
