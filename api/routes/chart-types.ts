import type { FastifyInstance } from 'fastify';
import { AGGREGATIONS, CHART_TYPES } from '../../controller/kinds/dashboard/catalogue.ts';
import { dashboardSchemas } from '../schemas/dashboards.ts';

/** docs/contract/api.md §4.9: the chart-type and aggregation catalogue, without authentication. */
export default async function routes(app: FastifyInstance): Promise<void> {
  const body = JSON.stringify({ success: true, chartTypes: CHART_TYPES, aggregations: AGGREGATIONS });
  app.get('/v1/sdk/chart-types', { schema: dashboardSchemas.chartTypes }, async (_req, reply) => reply.type('application/json; charset=utf-8').send(body));
}
