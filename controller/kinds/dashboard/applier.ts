import type { Applier, ApplyContext, PruneContext } from '../../types.ts';
import { checkDashboardReferences, normalizeTags, validateDashboard, type DashboardSpec } from './spec.ts';
import { deleteDashboard, facadeRowOfManifest, readFacadeRow, writeDashboard } from './store.ts';
import { StepError } from '../../errors.ts';
import { dashboardOwner, ownerOfDashboard } from './store.ts';

/**
 * Dashboard: one facade and one experiment per section, written in the reconciler's
 * transaction. Updates in place (facade, experiment and chart IDs stay), writes nothing when
 * nothing changed.
 */
export const dashboardApplier: Applier<DashboardSpec> = {
  kind: 'Dashboard',
  order: 2,
  lint(manifest) {
    return validateDashboard(manifest.spec, undefined, 'spec');
  },
  check(db, manifest) {
    return checkDashboardReferences(db, manifest.spec, 'spec');
  },
  apply(ctx: ApplyContext<DashboardSpec>) {
    const { db, manifest, key } = ctx;
    const prevId = ctx.previous?.facadeId;
    const existing = (typeof prevId === 'string' ? readFacadeRow(db, prevId) : undefined) ?? facadeRowOfManifest(db, key);
    if (existing && existing.connection_id !== manifest.spec.dataSource.dbId) {
      // Ownership never changes silently: the new data source must belong to the same client.
      const owner = dashboardOwner(db, existing.facade_id) ?? null;
      if (owner !== ownerOfDashboard(db, manifest.spec.dataSource)) {
        throw new StepError('facade', `dashboard ${existing.facade_id} belongs to ${owner === null ? 'no client' : `client ${owner}`}; spec.dataSource must stay with it`);
      }
    }
    const spec = { ...manifest.spec, tags: normalizeTags(manifest.spec.tags) };
    const { facadeId, experimentIds } = writeDashboard({ db, ids: ctx.ids, at: ctx.now.toISOString(), key, actor: ctx.actor, spec, existing, step: (name) => ctx.step(name) });
    return { facadeId, experimentIds };
  },
  prune(ctx: PruneContext) {
    const id = ctx.previous.facadeId;
    if (typeof id === 'string') deleteDashboard(ctx.db, id);
  },
};
