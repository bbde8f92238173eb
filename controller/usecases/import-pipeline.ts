import { ApplyFailedError, ValidationError } from '../errors.ts';
import { type Authorizer, isUnconfined } from '../authz/index.ts';
import { ownerOfConnections } from '../kinds/connection/store.ts';
import { pipelineConnections } from '../kinds/pipeline/normalize.ts';
import { resolveSteps } from '../kinds/pipeline/normalize.ts';
import { nextRunAt } from '../kinds/pipeline/schedule.ts';
import type { PipelineView } from '../kinds/pipeline/store.ts';
import { readPipeline } from '../runs/pipeline-view.ts';
import type { PipelineSpec } from '../kinds/pipeline/types.ts';
import { validatePipelinePayload } from '../kinds/pipeline/validate.ts';
import type { Config } from '../config.ts';
import type { Store } from '../store/db.ts';
import type { Clock } from '../types.ts';
import { pipelineReachProblems, RunReach } from '../runs/reach.ts';
import { storedReachConnection } from '../runs/engine/connections.ts';
import type { Principal } from '../auth/principal.ts';
import { NewManifests, type NewManifestPorts } from './new-manifest.ts';

const PIPELINES_DIR = 'pipelines';

/** docs/contract/design.md: a pipeline whose connections belong to no single client is for admins only. */
export const ADMIN_ONLY_PIPELINE = 'A pipeline must use the connections of one of your clients; other pipelines are for admins only';

/** What a pipeline import needs of the controller. */
export interface ImportPipelinePorts extends NewManifestPorts {
  readonly db: Store;
  readonly clock: Clock;
  readonly config: Pick<Config, 'scheduleMinIntervalMs' | 'pipelineFilesDir'>;
  readonly authz: Authorizer;
}

/** What a dry run shows: the steps the import would create, with no IDs yet. */
export interface PipelinePlan {
  pipelineId: null;
  name: string;
  status: 'draft';
  steps: { id: null; type: string; name: string; status: 'configured'; config: Record<string, unknown> }[];
  nextRunAt: string | null;
}

/**
 * docs/contract/api.md §4.4: validates the pipeline payload and submits it as a new Pipeline manifest
 * (`pipelines/<name>.yaml`), answering the stored pipeline. The manifest keeps the payload as
 * sent: defaults are applied again on every load.
 */
export class ImportPipeline {
  readonly #rt: ImportPipelinePorts;
  readonly #manifests: NewManifests;
  readonly #authz: Authorizer;

  constructor(opts: { runtime: ImportPipelinePorts }) {
    this.#rt = opts.runtime;
    this.#authz = opts.runtime.authz;
    this.#manifests = new NewManifests({ runtime: opts.runtime, kind: 'Pipeline', dir: PIPELINES_DIR, fallbackName: 'pipeline' });
  }

  /**
   * Validates the payload; a caller confined to its tenants may use only connections they own
   * (or shared ones): any other answers like an unknown ID, and the pipeline must belong to one
   * of its clients.
   */
  check(body: unknown, caller: Principal): PipelineSpec {
    const checked = validatePipelinePayload(this.#rt.schemas, body, { scheduleMinIntervalMs: this.#rt.config.scheduleMinIntervalMs });
    if (!checked.ok) throw new ValidationError([], checked.message);
    const spec = checked.spec;
    const connections = pipelineConnections(spec);
    if (!isUnconfined(caller)) {
      const unknown = connections.filter((connectionId) => !this.#authz.can(caller, 'use', { kind: 'connection', connectionId }));
      if (unknown.length) throw new ValidationError(unknown.map((id) => ({ path: 'connectionId', message: `connectionId ${id} is not an existing connection` })));
      this.#authz.requireOwnedWithin(caller, () => ownerOfConnections(this.#rt.db, connections), ADMIN_ONLY_PIPELINE);
    }
    // What the pipeline's runs may reach, decided as the runs will decide it (an admin's import of a tenant's pipeline too).
    const reach = new RunReach({ owner: ownerOfConnections(this.#rt.db, connections), filesRoot: this.#rt.config.pipelineFilesDir });
    const problems = pipelineReachProblems(reach, spec, (id) => storedReachConnection(this.#rt.db, id));
    if (problems.length) throw new ValidationError(problems, problems.map((p) => p.message).join('; '));
    return spec;
  }

  /** What an import would create, writing nothing: the checks, then the reconciler's dry run of the manifest it would write. */
  async plan(body: unknown, caller: Principal): Promise<PipelinePlan> {
    const spec = this.check(body, caller);
    await this.#manifests.dryRun({ displayName: spec.name, kind: 'Pipeline', spec: body as Record<string, unknown>, caller });
    const now = this.#rt.clock();
    const next = nextRunAt(spec.schedule, now, now);
    return {
      pipelineId: null,
      name: spec.name,
      status: 'draft',
      steps: resolveSteps(spec).map((s) => ({ id: null, type: s.type, name: s.name, status: 'configured', config: s.config })),
      nextRunAt: next ? next.toISOString() : null,
    };
  }

  async run(body: unknown, caller: Principal): Promise<PipelineView> {
    const spec = this.check(body, caller);
    return this.#manifests.submit({
      displayName: spec.name,
      kind: 'Pipeline',
      // The manifest keeps the payload as sent: defaults are applied again on every load.
      spec: body as Record<string, unknown>,
      caller,
      message: `import pipeline ${spec.name}`,
      accept: (result) => {
        if (result.phase === 'Invalid') throw new ValidationError([], result.message);
        const pipelineId = result.resourceIds.pipelineId;
        const view = result.phase === 'Synced' && typeof pipelineId === 'string' ? readPipeline(this.#rt.db, pipelineId, this.#rt.clock()) : undefined;
        if (!view) throw new ApplyFailedError(result, result.message || `pipeline ${spec.name} was not applied`);
        return view;
      },
    });
  }
}
