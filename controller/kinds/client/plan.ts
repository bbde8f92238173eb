import { sectionName, vdmName } from './rules.ts';
import { CLIENT_STEPS, type ClientRefs, type ClientSpec, type ClientStep } from './types.ts';

export const NEW_ID = '(new)';

/** What an onboarding would create (a dry run): IDs yet to be issued are shown as `(new)`. */
export interface OnboardingPlan {
  clientId: string;
  clientName: string;
  coreModelId: string;
  connection: { connectionId: string; action: 'create' | 'link' };
  modelId: string;
  vdms: { name: string; vdmId: string; securityEnabled: boolean }[];
  dashboards: { name: string; facadeId: string; experiments: { section: string; experimentId: string; charts: number }[] }[];
  steps: readonly ClientStep[];
}

/**
 * The plan of an onboarding from what the Client applier gave in the reconciler's dry run (its
 * IDs rolled back): whether the connection is created or linked; IDs yet to be issued as `(new)`.
 */
export function onboardingPlan(spec: ClientSpec, refs: ClientRefs): OnboardingPlan {
  return {
    clientId: refs.clientId,
    clientName: spec.clientName,
    coreModelId: spec.coreModelId,
    connection: { connectionId: refs.connectionId, action: refs.connectionCreated ? 'create' : 'link' },
    modelId: NEW_ID,
    vdms: spec.vdm.map((v, i) => ({ name: vdmName(v, i), vdmId: NEW_ID, securityEnabled: v.securityEnabled })),
    dashboards: (spec.dashboards ?? []).map((d) => ({
      name: d.name,
      facadeId: NEW_ID,
      experiments: d.sections.map((s, i) => ({ section: sectionName(s.name, i), experimentId: NEW_ID, charts: s.charts.length })),
    })),
    steps: CLIENT_STEPS,
  };
}
