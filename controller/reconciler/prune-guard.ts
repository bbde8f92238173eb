import type { Applier } from '../types.ts';
import type { StatusRecord } from './status.ts';

/**
 * The mass-prune guard: a sync that would remove more than `ratio` of the live objects (an
 * emptied folder, a bad push) is refused until confirmed. Returns the refusal, or undefined.
 */
export function massPruneRefusal(candidates: number, live: number, ratio: number): string | undefined {
  if (candidates <= 1 || candidates <= live * ratio) return undefined;
  return refusalText(candidates, live);
}

const refusalText = (candidates: number, live: number) =>
  `mass prune refused: ${candidates} of ${live} objects would be removed; confirm with bictl sync --allow-mass-prune`;

/** Dependents first: Dashboards and Pipelines, then Clients, then Connections and CoreModels. */
export function pruneOrder(rows: StatusRecord[], appliers: ReadonlyMap<string, Applier>): StatusRecord[] {
  return [...rows].sort((a, b) => (appliers.get(b.kind)?.order ?? 0) - (appliers.get(a.kind)?.order ?? 0));
}

/** How long a sequence of removals counts as one for the mass-prune guard. */
export const PRUNE_WINDOW_MS = 10_000;

/**
 * The removals of one window of time (PRUNE_WINDOW_MS from the first): an emptied folder arrives
 * from a watcher in several batches, so the guard counts them together, against the objects that
 * were live when the window opened, never per batch. Removals a source may still be delivering
 * (`held`) wait for the window to close before anything is pruned.
 */
export class RemovalWindow {
  /** Live objects when the window opened: the whole desired set the removals are counted against. */
  readonly base: number;
  /** Removals pruned at once in this window (a source that delivers each change whole). */
  pruned = 0;
  /** Removals waiting for the window to close. */
  readonly held = new Set<string>();
  /** The window's removals exceeded the ratio: nothing of it is pruned until confirmed. */
  blocked = false;
  readonly cancel: () => void;

  constructor(base: number, cancel: () => void) {
    this.base = base;
    this.cancel = cancel;
  }

  /** The refusal once `more` removals join this window, or undefined when they may go. */
  refusal(more: number, ratio: number): string | undefined {
    const total = this.pruned + this.held.size + more;
    return this.blocked ? refusalText(total, this.base) : massPruneRefusal(total, this.base, ratio);
  }
}
