import { StepError } from '../../errors.ts';
import type { Applier } from '../../types.ts';

// Placeholder until the Pipeline issue lands its applier.
export const pipelineApplier: Applier = {
  kind: 'Pipeline',
  order: 2,
  apply() {
    throw new StepError('apply', 'Pipeline applier not implemented yet');
  },
  prune() {},
};
