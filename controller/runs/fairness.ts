/**
 * Which waiting run starts next when a slot frees (docs/contract/design.md, "Fair slots"): round-robin
 * across tenants, so one tenant's flood delays another's run by at most one run's duration.
 * Pure: the in-process dispatcher and the PostgreSQL queue mode both ask it.
 */

/** A run's tenant: the client owning its pipeline; null for unowned (admin-only) pipelines, one tenant of their own. */
export type Tenant = string | null;

export interface WaitingRun {
  runId: string;
  tenant: Tenant;
  /** When it was queued (epoch ms). Equal times keep the order of the input. */
  queuedAt: number;
}

export interface FairnessState {
  /** Runs each tenant has active (running; the queue mode may count its queued ones too). Absent = 0. */
  active: ReadonlyMap<Tenant, number>;
  /**
   * When each tenant last had a run started (any increasing number: epoch ms, a sequence).
   * Absent = never. Breaks ties between tenants with as many active runs: the one served longest
   * ago goes first, which is the round-robin turn (without it, the flooding tenant's older runs
   * would keep winning on age whenever every slot had just freed).
   */
  lastStarted?: ReadonlyMap<Tenant, number>;
}

/**
 * The run to start next, or undefined when none waits. The tenant with the fewest active runs
 * goes first; among those, the one whose turn it is (its last start longest ago, never first);
 * then the one with the oldest waiting run. That tenant's oldest waiting run is chosen.
 */
export function nextFairRun<R extends WaitingRun>(waiting: readonly R[], state: FairnessState): R | undefined {
  // Each tenant's oldest waiting run (the first in input order among equal times).
  const oldest = new Map<Tenant, R>();
  for (const run of waiting) {
    const current = oldest.get(run.tenant);
    if (!current || run.queuedAt < current.queuedAt) oldest.set(run.tenant, run);
  }
  let best: R | undefined;
  let bestKey: [number, number, number] | undefined;
  for (const [tenant, run] of oldest) {
    const key: [number, number, number] = [state.active.get(tenant) ?? 0, state.lastStarted?.get(tenant) ?? Number.NEGATIVE_INFINITY, run.queuedAt];
    if (!bestKey || before(key, bestKey)) {
      best = run;
      bestKey = key;
    }
  }
  return best;
}

/** Lexicographic, strict: a tie keeps the earlier candidate (Map order = first seen in the input). */
function before(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return false;
}
