/** A queued run waiting for a slot, as the fairness rule sees it. */
export interface WaitingRun {
  runId: string;
  /** The pipeline's owning client; unowned pipelines share one tenant of their own. */
  tenant: string;
  queuedAt: string;
}

/**
 * The next waiting run to start, round-robin across tenants: the tenant with the fewest active
 * runs (`activeByTenant`: its queued and running ones) goes first, ties to the one whose oldest
 * waiting run is oldest; within a tenant, first come first served. Undefined when nothing waits.
 */
export function pickNext<T extends WaitingRun>(waiting: readonly T[], activeByTenant: Map<string, number>): T | undefined {
  const oldest = new Map<string, T>();
  for (const w of waiting) {
    const seen = oldest.get(w.tenant);
    if (!seen || w.queuedAt < seen.queuedAt || (w.queuedAt === seen.queuedAt && w.runId < seen.runId)) oldest.set(w.tenant, w);
  }
  let best: T | undefined;
  let bestActive = Number.POSITIVE_INFINITY;
  for (const [tenant, w] of oldest) {
    const active = activeByTenant.get(tenant) ?? 0;
    if (active < bestActive || (active === bestActive && best && (w.queuedAt < best.queuedAt || (w.queuedAt === best.queuedAt && w.runId < best.runId)))) {
      best = w;
      bestActive = active;
    }
  }
  return best;
}
