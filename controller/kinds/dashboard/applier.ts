import { StepError } from '../../errors.ts';
import type { Applier } from '../../types.ts';

// Placeholder until the Dashboard issue lands its applier.
export const dashboardApplier: Applier = {
  kind: 'Dashboard',
  order: 2,
  apply() {
    throw new StepError('apply', 'Dashboard applier not implemented yet');
  },
  prune() {},
};
