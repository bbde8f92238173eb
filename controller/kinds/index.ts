import type { Applier } from '../types.ts';
import { clientApplier, createClientApplier } from './client/applier.ts';
import { clientSetApplier } from './clientset/applier.ts';
import { connectionApplier } from './connection/applier.ts';
import { coreModelApplier } from './coremodel/applier.ts';
import { dashboardApplier } from './dashboard/applier.ts';
import { notifierApplier } from './notifier/applier.ts';
import { createPipelineApplier } from './pipeline/applier.ts';

/** Every kind the controller reconciles; the reconcile loop gets them from here and knows no kind itself. */
export function defaultAppliers(opts: { scheduleMinIntervalMs?: number; retentionMs?: number } = {}): Applier[] {
  const pipelineApplier = createPipelineApplier({ scheduleMinIntervalMs: opts.scheduleMinIntervalMs });
  const client = opts.retentionMs === undefined ? clientApplier : createClientApplier({ retentionMs: opts.retentionMs });
  return [coreModelApplier, connectionApplier, client, dashboardApplier, pipelineApplier, notifierApplier, clientSetApplier] as Applier[];
}
