import type { Store } from '../store/db.ts';
import { fromJson } from '../kinds/json.ts';
import { readPipelineRow, readStepRows } from '../kinds/pipeline/store.ts';

/** Who asks, as far as run access cares (the API's Principal fits). */
export interface RunCaller {
  role: 'admin' | 'member';
  /** A key scoped to one client (tenant). */
  clientScope?: string;
}

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
 * The one tenancy check of the run routes (until the single authorization module of issue 13
 * replaces it): a key scoped to a client sees a pipeline only when every connection the
 * pipeline references is that client's connection; unscoped keys and sessions see all.
 * An unknown pipeline is not visible, so callers answer both alike (404).
 */
export function pipelineVisibleTo(db: Store, caller: RunCaller, pipelineId: string): boolean {
  const connections = pipelineConnections(db, pipelineId);
  if (!connections) return false;
  if (!caller.clientScope) return true;
  const own = db.prepare("SELECT connection_id FROM clients WHERE client_id = ? AND status = 'ACTIVE'").get(caller.clientScope) as
    | { connection_id: string | null }
    | undefined;
  return !!own?.connection_id && connections.every((c) => c === own.connection_id);
}

/** A run is visible with its pipeline; runs of a removed pipeline only to unscoped callers. */
export function runVisibleTo(db: Store, caller: RunCaller, pipelineId: string): boolean {
  if (pipelineVisibleTo(db, caller, pipelineId)) return true;
  return !caller.clientScope && !readPipelineRow(db, pipelineId);
}

/** The client owning a pipeline: the one whose connection is every connection the pipeline references. */
export function pipelineClient(db: Store, pipelineId: string): string | undefined {
  const connections = pipelineConnections(db, pipelineId);
  if (!connections || connections.length === 0 || connections.some((c) => c !== connections[0])) return undefined;
  const row = db.prepare("SELECT client_id FROM clients WHERE connection_id = ? AND status = 'ACTIVE'").all(connections[0]) as { client_id: string }[];
  return row.length === 1 ? row[0].client_id : undefined;
}
