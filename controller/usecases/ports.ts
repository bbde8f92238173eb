import type { AuthService } from '../auth/service.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { KeyedMutex } from '../mutex.ts';
import type { Notifications } from '../notify/notifications.ts';
import type { Reconciler } from '../reconciler/reconciler.ts';
import type { PipelineRuns } from '../runs/runs.ts';
import type { Store } from '../store/db.ts';
import type { Clock, ManifestSource } from '../types.ts';
import type { ManifestSubmitter } from '../writers/submit.ts';
import type { AppliedStore } from '../reconciler/applied.ts';

/**
 * The parts of the controller the lifecycle use cases need (the Runtime has them all). Declared
 * here, below the runtime, so the runtime can build these use cases without an import cycle.
 */
export interface LifecyclePorts {
  readonly db: Store;
  readonly clock: Clock;
  readonly log: Logger;
  readonly config: Config;
  readonly locks: KeyedMutex;
  readonly auth: AuthService;
  readonly runs: PipelineRuns;
  readonly reconciler: Reconciler;
  readonly source: ManifestSource;
  readonly submitter: ManifestSubmitter;
  readonly notifications: Notifications;
  /** The applied versions of manifests: a purge forgets the client's. */
  readonly applied: Pick<AppliedStore, 'forget'>;
}
