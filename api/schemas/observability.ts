import { answer, route } from './common.ts';

export const observabilitySchemas = {
  metrics: route({
    method: 'GET',
    operationId: 'metrics',
    summary: 'Prometheus metrics in the text format',
    description: 'When BI_METRICS_TOKEN is set, the request must bear it: `Authorization: Bearer <token>`.',
    tags: ['observability'],
    auth: 'public',
    response: {
      200: {
        description: 'The metrics',
        content: { 'text/plain': { schema: { type: 'string', description: 'Prometheus text exposition format 0.0.4' } } },
      },
      401: { ...answer('MetricsTokenError', 'BI_METRICS_TOKEN is set and the request did not bear it'), headers: { 'www-authenticate': { type: 'string' } } },
    },
  }),
  notifiers: route({
    method: 'GET',
    operationId: 'notifierDeliveries',
    summary: 'The delivery state of each Notifier',
    tags: ['observability'],
    auth: 'admin',
    response: { 200: answer('NotifierDeliveries', 'Every Notifier') },
  }),
};
