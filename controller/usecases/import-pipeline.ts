import { ApplyFailedError, ValidationError } from '../errors.ts';
import { resolveSteps } from '../kinds/pipeline/normalize.ts';
import { nextRunAt } from '../kinds/pipeline/schedule.ts';
import { readPipeline, type PipelineView } from '../kinds/pipeline/store.ts';
import type { PipelineSpec } from '../kinds/pipeline/types.ts';
import { validatePipelinePayload } from '../kinds/pipeline/validate.ts';
import type { Runtime } from '../runtime.ts';
import type { Principal } from '../auth/principal.ts';
import { NewManifests } from './new-manifest.ts';

const PIPELINES_DIR = 'pipelines';

/** What a dry run shows: the steps the import would create, with no IDs yet. */
export interface PipelinePlan {
  pipelineId: null;
  name: string;
  status: 'draft';
  steps: { id: null; type: string; name: string; status: 'configured'; config: Record<string, unknown> }[];
  nextRunAt: string | null;
}

/**
 * Spec 4.4: validates the pipeline payload and submits it as a new Pipeline manifest
 * (`pipelines/<name>.yaml`), answering the stored pipeline. The manifest keeps the payload as
 * sent: defaults are applied again on every load.
 */
export class ImportPipeline {
  readonly #rt: Runtime;
  readonly #manifests: NewManifests;

  constructor(opts: { runtime: Runtime }) {
    this.#rt = opts.runtime;
    this.#manifests = new NewManifests({ runtime: opts.runtime, kind: 'Pipeline', dir: PIPELINES_DIR, fallbackName: 'pipeline' });
  }

  check(body: unknown): PipelineSpec {
    const checked = validatePipelinePayload(this.#rt.schemas, body);
    if (!checked.ok) throw new ValidationError([], checked.message);
    return checked.spec;
  }

  plan(body: unknown): PipelinePlan {
    const spec = this.check(body);
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
    const spec = this.check(body);
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
