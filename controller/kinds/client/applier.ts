import { StepError } from '../../errors.ts';
import type { Applier } from '../../types.ts';

// Placeholder until the Client issue lands its applier.
export const clientApplier: Applier = {
  kind: 'Client',
  order: 1,
  apply() {
    throw new StepError('apply', 'Client applier not implemented yet');
  },
  prune() {},
};
