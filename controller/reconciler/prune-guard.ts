import type { Applier } from '../types.ts';
import type { StatusRecord } from './status.ts';

/**
 * The mass-prune guard: a sync that would remove more than `ratio` of the live objects (an
 * emptied folder, a bad push) is refused until confirmed. Returns the refusal, or undefined.
 */
export function massPruneRefusal(candidates: number, live: number, ratio: number): string | undefined {
  if (candidates <= 1 || candidates <= live * ratio) return undefined;
  return `mass prune refused: ${candidates} of ${live} objects would be removed; confirm with bictl sync --allow-mass-prune`;
}

/** Dependents first: Dashboards and Pipelines, then Clients, then Connections and CoreModels. */
export function pruneOrder(rows: StatusRecord[], appliers: ReadonlyMap<string, Applier>): StatusRecord[] {
  return [...rows].sort((a, b) => (appliers.get(b.kind)?.order ?? 0) - (appliers.get(a.kind)?.order ?? 0));
}
