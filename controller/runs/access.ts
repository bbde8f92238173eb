import type { Store } from '../store/db.ts';
import { fromJson } from '../kinds/json.ts';
import { readPipelineRow, readStepRows } from '../kinds/pipeline/store.ts';
import type { Principal } from '../auth/principal.ts';
import { isUnconfined, type Authorizer } from '../authz/index.ts';
import { pipelineOwner } from '../kinds/pipeline/store.ts';

/** Every connection a pipeline references: source, destination and each step's (overrides and inherited). */
export function pipelineConnections(db: Store, pipelineId: string): string[] | undefined {
  const row = readPipelineRow(db, pipelineId);
  if (!row) return undefined;
  const ids = new Set<string>();
  const add = (v: unknown) => {
    if (typeof v === 'string' && v) ids.add(v);
  };
  add(fromJson<{ connectionId?: unknown }>(row.source, {}).connectionId);
  add(fromJson<{ connectionId?: unknown }>(row.destination, {}).connectionId);
  for (const step of readStepRows(db, pipelineId)) add(fromJson<{ connectionId?: unknown }>(step.config, {}).connectionId);
  return [...ids];
}

/**
 * Runs belong to their pipeline's owner: a caller sees (and starts, cancels) the runs of a
 * pipeline it may run — the one authorization module decides. An unknown pipeline is not
 * visible, so callers answer both alike (404).
 */
export function pipelineVisibleTo(db: Store, authz: Authorizer, caller: Principal, pipelineId: string): boolean {
  return pipelineOwner(db, pipelineId) !== undefined && authz.can(caller, 'run', { kind: 'pipeline', pipelineId });
}

/** A run is visible with its pipeline; runs of a removed pipeline only to unconfined callers (admins). */
export function runVisibleTo(db: Store, authz: Authorizer, caller: Principal, pipelineId: string): boolean {
  if (pipelineVisibleTo(db, authz, caller, pipelineId)) return true;
  return isUnconfined(caller) && pipelineOwner(db, pipelineId) === undefined;
}

/** The client owning a pipeline (stored with it), for metrics and notifications. */
export function pipelineClient(db: Store, pipelineId: string): string | undefined {
  return pipelineOwner(db, pipelineId) ?? undefined;
}
