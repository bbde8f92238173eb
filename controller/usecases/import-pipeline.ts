import { ApplyFailedError, ValidationError } from '../errors.ts';
import { resolveSteps } from '../kinds/pipeline/normalize.ts';
import { nextRunAt } from '../kinds/pipeline/schedule.ts';
import { readPipeline, type PipelineView } from '../kinds/pipeline/store.ts';
import type { PipelineSpec } from '../kinds/pipeline/types.ts';
import { validatePipelinePayload } from '../kinds/pipeline/validate.ts';
import type { Runtime } from '../runtime.ts';
import type { Manifest } from '../types.ts';
import { ManifestNames } from '../writers/names.ts';
import { slugify } from '../writers/paths.ts';
import type { Principal } from '../auth/principal.ts';

const PIPELINES_DIR = 'pipelines';

/** Base of the manifest name: the slug of the display name, short enough for a `-<n>` suffix. */
function baseName(displayName: string): string {
  return slugify(displayName, 'pipeline').slice(0, 100);
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
 * Spec 4.4: validates the pipeline payload and submits it as a new Pipeline manifest
 * (`pipelines/<name>.yaml`), answering the stored pipeline. The manifest keeps the payload as
 * sent: defaults are applied again on every load.
 */
export class ImportPipeline {
  readonly #rt: Runtime;
  readonly #names: ManifestNames;

  constructor(opts: { runtime: Runtime }) {
    this.#rt = opts.runtime;
    const rt = opts.runtime;
    this.#names = new ManifestNames({ kind: 'Pipeline', dir: PIPELINES_DIR, locks: rt.locks, status: rt.reconciler.status, writer: rt.writer });
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
    const base = baseName(spec.name);
    const name = await this.#names.reserve(base);
    const manifest: Manifest = { apiVersion: 'bi.controller/v1', kind: 'Pipeline', metadata: { name }, spec: body as Record<string, unknown> };
    let applied = false;
    try {
      const result = await this.#rt.submitter.submit({ relPath: this.#names.relPath(name), manifest, caller, message: `import pipeline ${spec.name}` });
      if (result.phase === 'Invalid') throw new ValidationError([], result.message);
      const pipelineId = result.resourceIds.pipelineId;
      const view = result.phase === 'Synced' && typeof pipelineId === 'string' ? readPipeline(this.#rt.db, pipelineId, this.#rt.clock()) : undefined;
      if (!view) throw new ApplyFailedError(result, result.message || `pipeline ${spec.name} was not applied`);
      applied = true;
      return view;
    } finally {
      this.#names.release(base, name, !applied);
    }
  }
}
