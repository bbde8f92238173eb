import type { Store } from '../../store/db.ts';
import { formatProblem, StepError } from '../../errors.ts';
import { manifestKey } from '../../manifest/loader.ts';
import { IdAllocator } from '../../store/ids.ts';
import type { Applier, Manifest } from '../../types.ts';
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

/** A failed plan carries the StepError the real onboarding would fail with. */
export type PlanResult = { ok: true; plan: OnboardingPlan } | { ok: false; error: StepError };

class DryRunRollback extends Error {
  constructor(readonly refs: ClientRefs) {
    super('dry run');
  }
}

/**
 * Runs the Client applier against the store inside a transaction that is always rolled back:
 * the dry run fails exactly where the real onboarding would, and changes nothing.
 */
export function planOnboarding(opts: { db: Store; applier: Applier<ClientSpec>; manifest: Manifest<ClientSpec>; actor: string; now: Date }): PlanResult {
  const { db, applier, manifest, now } = opts;
  const key = manifestKey('Client', manifest.metadata.name);
  const problems = applier.check?.(db, manifest) ?? [];
  if (problems.length) return { ok: false, error: new StepError('validate', problems.map(formatProblem).join('; ')) };
  const ids = new IdAllocator({ db, clock: () => now });
  let refs: ClientRefs;
  try {
    db.transaction(() => {
      const r = applier.apply({ db, ids, now, key, manifest, previous: undefined, actor: opts.actor, step: () => {} }) as ClientRefs;
      throw new DryRunRollback(r);
    })();
    throw new Error('dry run did not roll back');
  } catch (err) {
    if (!(err instanceof DryRunRollback)) {
      if (err instanceof StepError) return { ok: false, error: err };
      return { ok: false, error: new StepError('apply', (err as Error).message) };
    }
    refs = err.refs;
  }
  const spec = manifest.spec;
  return {
    ok: true,
    plan: {
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
    },
  };
}
