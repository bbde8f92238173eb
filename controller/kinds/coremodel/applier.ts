import type { Coremodel } from '../../generated/schema-types.ts';
import { StepError } from '../../errors.ts';
import type { Applier, ApplyContext, PruneContext } from '../../types.ts';
import { toJson } from '../json.ts';

/** A CoreModel manifest's spec (schemas/coremodel.schema.json). */
export type CoreModelSpec = Coremodel;

interface Row {
  model_id: string;
  name: string;
  description: string;
  definition: string;
}

/** CoreModel: the core semantic model client models inherit from. */
export const coreModelApplier: Applier<CoreModelSpec> = {
  kind: 'CoreModel',
  order: 0,
  apply(ctx: ApplyContext<CoreModelSpec>) {
    const { db, manifest, now } = ctx;
    const spec = manifest.spec;
    const prevId = ctx.previous?.modelId as string | undefined;
    const id = spec.modelId ?? prevId ?? ctx.ids.next('semanticModel');
    if (spec.modelId && spec.modelId !== prevId) {
      const taken = db.statements.prepare('SELECT manifest_key FROM core_models WHERE model_id = ?').get(id) as { manifest_key: string } | undefined;
      if (taken && taken.manifest_key !== ctx.key) throw new StepError('core model', `model ID ${id} is already used by ${taken.manifest_key}`);
      ctx.ids.pin('semanticModel', id);
    }
    ctx.step('core model');
    if (prevId && prevId !== id) db.statements.prepare('DELETE FROM core_models WHERE model_id = ?').run(prevId);
    const row = db.statements.prepare('SELECT model_id, name, description, definition FROM core_models WHERE model_id = ?').get(id) as Row | undefined;
    const next = { name: spec.name, description: spec.description, definition: toJson(spec.definition) };
    const at = now.toISOString();
    if (!row) {
      db.statements.prepare(
        `INSERT INTO core_models (model_id, name, description, definition, manifest_key, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ).run(id, next.name, next.description, next.definition, ctx.key, at, at);
    } else if (row.name !== next.name || row.description !== next.description || row.definition !== next.definition) {
      db.statements.prepare('UPDATE core_models SET name = ?, description = ?, definition = ?, manifest_key = ?, updated_at = ? WHERE model_id = ?').run(
        next.name, next.description, next.definition, ctx.key, at, id,
      );
    }
    return { modelId: id };
  },
  prune(ctx: PruneContext) {
    const id = ctx.previous.modelId as string | undefined;
    if (!id) return;
    const used = ctx.db.statements.prepare('SELECT COUNT(*) AS n FROM semantic_models WHERE core_model_id = ?').get(id) as { n: number };
    if (used.n > 0) throw new StepError('prune', `core model ${id} is inherited by ${used.n} client model(s)`);
    ctx.db.statements.prepare('DELETE FROM core_models WHERE model_id = ?').run(id);
  },
};
