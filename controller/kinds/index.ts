import type { Applier } from '../types.ts';
import { clientApplier, createClientApplier } from './client/applier.ts';
import { connectionApplier } from './connection/applier.ts';
import { coreModelApplier } from './coremodel/applier.ts';
import { dashboardApplier } from './dashboard/applier.ts';
import { notifierApplier } from './notifier/applier.ts';
import { pipelineApplier } from './pipeline/applier.ts';

/** Every kind the controller reconciles; the reconcile loop gets them from here and knows no kind itself. */
export function defaultAppliers(opts: { retentionMs?: number } = {}): Applier[] {
  const client = opts.retentionMs === undefined ? clientApplier : createClientApplier({ retentionMs: opts.retentionMs });
  return [coreModelApplier, connectionApplier, client, dashboardApplier, pipelineApplier, notifierApplier] as Applier[];
}
