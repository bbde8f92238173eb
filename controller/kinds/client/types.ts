/** Shapes of the Client kind: the onboarding package (spec 2.3) with schema defaults applied. */

export type ColumnSpec = string | { name: string; [key: string]: unknown };

export interface VdmSpec {
  name?: string;
  description?: string;
  vendor: string;
  sourceType: string;
  selectedColumns?: ColumnSpec[];
  joinConfiguration?: unknown[];
  measureConfiguration?: unknown[];
  expressionConfiguration?: unknown[];
  timeSeriesConfiguration?: unknown[];
  rankingConfiguration?: unknown[];
  filterConfiguration?: unknown[];
  arithmeticConfiguration?: unknown[];
  transformationConfiguration?: unknown[];
  securityEnabled: boolean;
  securityBindings?: Record<string, unknown>;
  userScopeTable?: Record<string, unknown>;
  scopeDefnTable?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface SectionSpec {
  name?: string;
  topSection: boolean;
  category: boolean;
  charts: Record<string, unknown>[];
  [key: string]: unknown;
}

export interface ClientDashboardSpec {
  name: string;
  description?: string;
  templateType?: string;
  layoutTemplateName?: string;
  category?: unknown[];
  tags?: string[];
  sections: SectionSpec[];
  [key: string]: unknown;
}

export interface ClientSpec {
  clientId: string;
  clientName: string;
  description?: string;
  connectionId: string;
  coreModelId: string;
  externalIdKey?: string;
  vdm: VdmSpec[];
  dashboards?: ClientDashboardSpec[];
  security: { enabled: boolean };
  [key: string]: unknown;
}

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

export type ClientStatus = 'ACTIVE' | 'FAILED' | 'DELETED';
export const CLIENT_STATUSES: readonly ClientStatus[] = ['ACTIVE', 'FAILED', 'DELETED'];
