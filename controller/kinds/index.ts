import type { Applier } from '../types.ts';
import { clientApplier } from './client/applier.ts';
import { clientSetApplier } from './clientset/applier.ts';
import { connectionApplier } from './connection/applier.ts';
import { coreModelApplier } from './coremodel/applier.ts';
import { dashboardApplier } from './dashboard/applier.ts';
import { notifierApplier } from './notifier/applier.ts';
import { createPipelineApplier } from './pipeline/applier.ts';

/** Every kind the controller reconciles; the reconcile loop gets them from here and knows no kind itself. */
export function defaultAppliers(opts: { scheduleMinIntervalMs?: number } = {}): Applier[] {
  const pipelineApplier = createPipelineApplier({ scheduleMinIntervalMs: opts.scheduleMinIntervalMs });
  return [coreModelApplier, connectionApplier, clientApplier, dashboardApplier, pipelineApplier, notifierApplier, clientSetApplier] as Applier[];
}
