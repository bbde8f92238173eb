import type { FastifyInstance } from 'fastify';
import apiKeys from './api-keys.ts';
import auth from './auth.ts';
import chartTypes from './chart-types.ts';
import clients from './clients.ts';
import clientSets from './clientsets.ts';
import clientLifecycle from './client-lifecycle.ts';
import audit from './audit.ts';
import connections from './connections.ts';
import connectionEdits from './connection-edits.ts';
import dashboards from './dashboards.ts';
import health from './health.ts';
import objects from './objects.ts';
import observability from './observability.ts';
import dashboardImport from './dashboard-import.ts';
import onboard from './onboard.ts';
import openapi from './openapi.ts';
import pipelineRuns from './pipeline-runs.ts';
import pipelines from './pipelines.ts';
import pipelineSchedule from './pipeline-schedule.ts';
import reconciler from './reconciler.ts';
import runExports from './run-exports.ts';
import settings from './settings.ts';
import ui from './ui.ts';
import users from './users.ts';
import workers from './workers.ts';

/** Every route module, registered in this order by buildApp. */
export const routes: ((app: FastifyInstance) => Promise<void>)[] = [
  // First: its request-timing hook covers every route registered after it.
  observability,
  health,
  auth,
  apiKeys,
  onboard,
  clients,
  clientLifecycle,
  audit,
  chartTypes,
  dashboardImport,
  dashboards,
  pipelines,
  pipelineSchedule,
  pipelineRuns,
  runExports,
  reconciler,
  objects,
  clientSets,
  settings,
  connections,
  connectionEdits,
  users,
  workers,
  openapi,
  ui,
];
