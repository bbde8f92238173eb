import type { Store } from '../../store/db.ts';
import type { Applier, ApplyContext, PruneContext } from '../../types.ts';
import { toJson } from '../json.ts';
import { resolveSteps } from './normalize.ts';
import { readPipelineRow, readStepRows } from './store.ts';
import type { PipelineSpec } from './types.ts';
import { semanticProblems, type SemanticOptions } from './validate.ts';
import { ownerOfConnections } from '../connection/store.ts';
import { pipelineConnections } from './normalize.ts';
import { pipelineOwner } from './store.ts';
import { StepError } from '../../errors.ts';

const COLUMNS = ['name', 'description', 'category', 'tags', 'source', 'destination', 'schedule', 'manifest_key'] as const;
type Columns = Record<(typeof COLUMNS)[number], string | null>;

function pipelineColumns(spec: PipelineSpec, key: string): Columns {
  return {
    name: spec.name,
    description: spec.description ?? '',
    category: spec.category ?? null,
    tags: toJson(spec.tags ?? []),
    source: toJson(spec.source),
    destination: toJson(spec.destination),
    schedule: spec.schedule ? toJson(spec.schedule) : null,
    manifest_key: key,
  };
}

/**
 * Pipeline (docs/contract/api.md §2.5): a `draft` pipeline `DP-<ms>` with its generated source step and the
 * supplied steps, each `step-<digits>-<index>` and `configured`. An update keeps the pipeline
 * ID; a step keeps its ID while its position holds a step of the same type (its name and
 * config are updated in place); any other step is new and gets a fresh stamp. Writes nothing
 * when nothing changed.
 */
export const pipelineApplier: Applier<PipelineSpec> = {
  kind: 'Pipeline',
  order: 2,
  lint(manifest) {
    return semanticProblems(manifest.spec, 'spec');
  },
  apply(ctx: ApplyContext<PipelineSpec>) {
    const { db, manifest, now } = ctx;
    const at = now.toISOString();
    const cols = pipelineColumns(manifest.spec, ctx.key);
    const prevId = ctx.previous?.pipelineId;
    const existing = typeof prevId === 'string' ? readPipelineRow(db, prevId) : undefined;
    ctx.step('pipeline');
    const owner = ownerOfConnections(db, pipelineConnections(manifest.spec));
    let pipelineId: string;
    let changed = false;
    if (existing) {
      pipelineId = existing.pipeline_id;
      changed = COLUMNS.some((c) => existing[c] !== cols[c]);
      // Ownership never changes silently: an owned pipeline keeps to its client's connections.
      const stored = pipelineOwner(db, pipelineId) ?? null;
      if (stored !== null && stored !== owner) throw new StepError('pipeline', `pipeline ${pipelineId} belongs to client ${stored}; its connections must stay with it`);
      if (stored !== owner) db.prepare('UPDATE pipelines SET owner_client_id = ? WHERE pipeline_id = ?').run(owner, pipelineId);
    } else {
      // Keep a known ID even when its row went missing; otherwise a fresh stamp.
      pipelineId = typeof prevId === 'string' ? prevId : `DP-${ctx.ids.nextStamp('pipeline')}`;
      db.statements.prepare(
        `INSERT INTO pipelines (pipeline_id, ${COLUMNS.join(', ')}, status, owner_client_id, created_by, created_at, updated_at)
         VALUES (@id, ${COLUMNS.map((c) => `@${c}`).join(', ')}, 'draft', @owner, @actor, @at, @at)`,
      ).run({ id: pipelineId, ...cols, owner, actor: ctx.actor, at });
    }
    ctx.step('steps');
    const stamp = existing ? () => ctx.ids.nextStamp('pipeline') : () => Number(pipelineId.slice(3));
    const steps = syncSteps(db, pipelineId, resolveSteps(manifest.spec), stamp);
    if (existing && (changed || steps.changed)) {
      db.statements.prepare(`UPDATE pipelines SET ${COLUMNS.map((c) => `${c} = @${c}`).join(', ')}, updated_at = @at WHERE pipeline_id = @id`).run({
        id: pipelineId,
        ...cols,
        at,
      });
    }
    return { pipelineId, stepIds: steps.ids };
  },
  prune(ctx: PruneContext) {
    const id = ctx.previous.pipelineId;
    if (typeof id !== 'string') return;
    ctx.db.statements.prepare('DELETE FROM pipeline_steps WHERE pipeline_id = ?').run(id);
    ctx.db.statements.prepare('DELETE FROM pipelines WHERE pipeline_id = ?').run(id);
  },
};

/** The Pipeline applier with this controller's settings (BI_SCHEDULE_MIN_INTERVAL). */
export function createPipelineApplier(opts: SemanticOptions): Applier<PipelineSpec> {
  return { ...pipelineApplier, lint: (manifest) => semanticProblems(manifest.spec, 'spec', opts) };
}

/**
 * Makes the stored steps of `pipelineId` equal `wanted`, position by position. `stamp` gives
 * the digits of new step IDs; it is asked at most once.
 */
function syncSteps(
  db: Store,
  pipelineId: string,
  wanted: ReturnType<typeof resolveSteps>,
  stamp: () => number,
): { ids: string[]; changed: boolean } {
  const old = readStepRows(db, pipelineId);
  let digits: number | undefined;
  let changed = false;
  const insert = db.statements.prepare(
    `INSERT INTO pipeline_steps (step_id, pipeline_id, position, type, name, status, config) VALUES (?, ?, ?, ?, ?, 'configured', ?)`,
  );
  const remove = db.statements.prepare('DELETE FROM pipeline_steps WHERE step_id = ?');
  const ids = wanted.map((step, i) => {
    const prev = old[i];
    const config = toJson(step.config);
    if (prev && prev.position === i && prev.type === step.type) {
      if (prev.name !== step.name || prev.config !== config) {
        db.statements.prepare('UPDATE pipeline_steps SET name = ?, config = ? WHERE step_id = ?').run(step.name, config, prev.step_id);
        changed = true;
      }
      return prev.step_id;
    }
    if (prev) remove.run(prev.step_id);
    digits ??= stamp();
    const id = `step-${digits}-${i}`;
    insert.run(id, pipelineId, i, step.type, step.name, config);
    changed = true;
    return id;
  });
  for (const extra of old.slice(wanted.length)) {
    remove.run(extra.step_id);
    changed = true;
  }
  return { ids, changed };
}
