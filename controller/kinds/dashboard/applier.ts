import type { Applier, ApplyContext, PruneContext } from '../../types.ts';
import { fromJson, toJson } from '../json.ts';
import { buildSections, type NormalizedChart, type PreviousSection } from './charts.ts';
import { checkDashboardReferences, validateDashboard, isSimpleMode, normalizeTags, sectionsOf, type DashboardSpec } from './spec.ts';
import { dashboardStatements, type FacadeDefinition } from './store.ts';
import { StepError } from '../../errors.ts';
import { dashboardOwner, ownerOfDashboard } from '../../authz/ownership.ts';

/** `facades.definition` of a spec: everything the facade row has no column for. */
export function facadeDefinition(spec: DashboardSpec): FacadeDefinition {
  const def: FacadeDefinition = {
    mode: isSimpleMode(spec) ? 'simple' : 'sections',
    dataSource: spec.dataSource,
    layout: spec.layout,
    category: spec.category ?? [],
    tags: normalizeTags(spec.tags),
    isPublic: spec.isPublic,
  };
  if (spec.templateType !== undefined) def.templateType = spec.templateType;
  if (spec.layoutTemplateName !== undefined) def.layoutTemplateName = spec.layoutTemplateName;
  return def;
}

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
    const spec = manifest.spec;
    const s = dashboardStatements(db);
    const prevId = ctx.previous?.facadeId;
    const existing = (typeof prevId === 'string' ? s.facade.get(prevId) : undefined) ?? s.facadeByKey.get(key);
    const prevRows = existing ? s.experiments.all(existing.facade_id) : [];
    const previous: PreviousSection[] = prevRows.map((r) => ({
      experimentId: r.experiment_id,
      name: r.section,
      charts: fromJson<NormalizedChart[]>(r.charts, []),
    }));
    ctx.step('charts');
    const sections = buildSections(sectionsOf(spec), previous);
    ctx.step('facade');
    const at = ctx.now.toISOString();
    const facadeId = existing?.facade_id ?? ctx.ids.next('facade');
    const cols = {
      id: facadeId,
      name: spec.name,
      description: spec.description ?? '',
      connectionId: spec.dataSource.dbId,
      vdmId: spec.dataSource.vdmId ?? null,
      key,
      definition: toJson(facadeDefinition(spec)),
      at,
    };
    let changed = false;
    if (existing && existing.connection_id !== cols.connectionId) {
      // Ownership never changes silently: the new data source must belong to the same client.
      const owner = dashboardOwner(db, existing.facade_id) ?? null;
      if (owner !== ownerOfDashboard(db, spec.dataSource)) throw new StepError('facade', `dashboard ${existing.facade_id} belongs to ${owner === null ? 'no client' : `client ${owner}`}; spec.dataSource must stay with it`);
    }
    if (!existing) {
      s.insertFacade.run({ ...cols, actor: ctx.actor });
    } else if (
      existing.name !== cols.name ||
      existing.description !== cols.description ||
      existing.connection_id !== cols.connectionId ||
      existing.vdm_id !== cols.vdmId ||
      existing.manifest_key !== key ||
      existing.definition !== cols.definition
    ) {
      s.updateFacade.run(cols);
      changed = true;
    }
    ctx.step('experiments');
    const byId = new Map(prevRows.map((r) => [r.experiment_id, r]));
    const experimentIds = sections.map((section, position) => {
      const row = {
        id: section.experimentId ?? ctx.ids.next('experiment'),
        facadeId,
        section: section.name,
        position,
        topSection: section.topSection ? 1 : 0,
        category: section.category ? 1 : 0,
        charts: JSON.stringify(section.charts),
        at,
      };
      const old = byId.get(row.id);
      byId.delete(row.id);
      if (!old) {
        s.insertExperiment.run(row);
        changed = true;
      } else if (
        old.section !== row.section ||
        old.position !== position ||
        old.top_section !== row.topSection ||
        old.category !== row.category ||
        old.charts !== row.charts
      ) {
        s.updateExperiment.run(row);
        changed = true;
      }
      return row.id;
    });
    for (const gone of byId.keys()) {
      s.deleteExperiment.run(gone);
      changed = true;
    }
    if (existing && changed && existing.updated_at !== at) s.touchFacade.run(at, facadeId);
    return { facadeId, experimentIds };
  },
  prune(ctx: PruneContext) {
    const id = ctx.previous.facadeId;
    if (typeof id !== 'string') return;
    const s = dashboardStatements(ctx.db);
    s.deleteExperiments.run(id);
    s.deleteFacade.run(id);
  },
};
