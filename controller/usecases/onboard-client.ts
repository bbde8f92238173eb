import { ApplyFailedError, ValidationError } from '../errors.ts';
import { onboardingPlan, type OnboardingPlan } from '../kinds/client/plan.ts';
import { onboardView, readClient, type OnboardedClient } from '../kinds/client/registry.ts';
import { parseOnboardingPackage } from '../kinds/client/rules.ts';
import type { ClientRefs, ClientSpec } from '../kinds/client/types.ts';
import type { Authorizer } from '../authz/index.ts';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { Reconciler } from '../reconciler/reconciler.ts';
import type { Store } from '../store/db.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import type { Clock, Manifest } from '../types.ts';
import type { Principal } from '../auth/principal.ts';
import { dryRunDocument } from './dry-run.ts';

/** Where the API records a client's desired state: one manifest per client, named by its ID. */
export const clientManifestPath = (clientId: string): string => `clients/${clientId}.yaml`;

/** What onboarding needs of the controller. */
export interface OnboardPorts {
  readonly db: Store;
  readonly clock: Clock;
  readonly schemas: SchemaRegistry;
  readonly authz: Authorizer;
  readonly locks: KeyedMutex;
  readonly reconciler: Pick<Reconciler, 'dryRun'>;
  readonly submitter: Pick<ManifestSubmitter, 'render' | 'submit'>;
}

export type OnboardOutcome =
  | { status: 'COMPLETED' | 'ALREADY_EXISTS'; client: OnboardedClient }
  | { status: 'DRY_RUN'; plan: OnboardingPlan };

/**
 * docs/contract/api.md §4.1: validate the onboarding package; under the client's lock answer ALREADY_EXISTS for an
 * ACTIVE client, or submit `clients/<ID>.yaml`: COMPLETED, or a 422 FAILED with the manifest
 * withdrawn again (all or nothing). A dry run plans only.
 */
export class OnboardClient {
  readonly #rt: OnboardPorts;
  readonly #authz: Authorizer;

  constructor(opts: { runtime: OnboardPorts }) {
    this.#rt = opts.runtime;
    this.#authz = opts.runtime.authz;
  }

  async run(body: unknown, caller: Principal, opts: { dryRun?: boolean } = {}): Promise<OnboardOutcome> {
    const rt = this.#rt;
    const { raw, spec } = parseOnboardingPackage(rt.schemas, body);
    const clientId = spec.clientId;
    this.#authz.requireOnboard(caller, clientId);
    const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Client', metadata: { name: clientId }, spec: raw };
    return rt.locks.run(`Client/${clientId}`, async (): Promise<OnboardOutcome> => {
      // Refused before anything is written: no manifest, no registry entry (409).
      this.#authz.requireConnectionFor(caller, clientId, spec.connectionId);
      const existing = readClient(rt.db, clientId);
      if (existing?.status === 'ACTIVE') return { status: 'ALREADY_EXISTS', client: onboardView(existing) };
      const relPath = clientManifestPath(clientId);
      if (opts.dryRun) {
        const { document } = rt.submitter.render(relPath, manifest, caller);
        const refs = dryRunDocument(rt, relPath, document, { actor: caller.userId, details: { dryRun: true, status: 'FAILED' } });
        return { status: 'DRY_RUN', plan: onboardingPlan(spec, refs as ClientRefs) };
      }
      const result = await rt.submitter.submit({ relPath, manifest, caller, message: `onboard client ${clientId}` });
      const row = readClient(rt.db, clientId);
      if (result.phase === 'Synced' && row?.status === 'ACTIVE') return { status: 'COMPLETED', client: onboardView(row) };
      if (result.phase === 'Invalid') throw new ValidationError([], `Validation failed: ${result.message}`);
      const client = row && row.status === 'FAILED' ? onboardView(row) : failedView(spec, caller.userId, rt.clock().toISOString());
      throw new ApplyFailedError(result, result.message, { status: 'FAILED', client });
    });
  }
}

/** The FAILED client of a 422 when no audit row could be read back. */
function failedView(spec: ClientSpec, userId: string, at: string): OnboardedClient {
  return {
    clientId: spec.clientId,
    clientName: spec.clientName,
    connectionId: spec.connectionId,
    modelId: null,
    vdmIds: [],
    facadeIds: [],
    experimentIds: [],
    coreModelId: spec.coreModelId,
    status: 'FAILED',
    onboardedBy: userId,
    onboardedDate: at,
  };
}
