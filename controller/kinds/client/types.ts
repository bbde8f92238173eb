import { CLIENT_STATUSES as GENERATED_CLIENT_STATUSES } from '../../generated/schema-constants.ts';
import type { Client, ClientDashboard, ClientVdm } from '../../generated/schema-types.ts';

/** Shapes of the Client kind: the onboarding package (docs/contract/api.md §2.3) with schema defaults applied, from schemas/client.schema.json. */

export type VdmSpec = ClientVdm;
export type ClientDashboardSpec = ClientDashboard;
export type ClientSpec = Client;

/** The onboarding steps, in order; StepError and progress events carry these names. */
export const CLIENT_STEPS = ['create connection', 'create model', 'publish vdm', 'deploy dashboard', 'register client'] as const;
export type ClientStep = (typeof CLIENT_STEPS)[number];

/** What a successful Client apply owns (the reconciler keeps it as the manifest's resource IDs). */
export interface ClientRefs {
  clientId: string;
  connectionId: string;
  /** True when this client's onboarding created the connection (it may then remove it on prune). */
  connectionCreated: boolean;
  modelId: string;
  vdmIds: string[];
  facadeIds: string[];
  experimentIds: string[];
  [key: string]: unknown;
}

/** Registry statuses (docs/contract/api.md §3), derived from schemas/api.schema.json. */
export const CLIENT_STATUSES = GENERATED_CLIENT_STATUSES;
export type ClientStatus = (typeof CLIENT_STATUSES)[number];
