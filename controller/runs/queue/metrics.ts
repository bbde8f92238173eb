import { Counter, Gauge, type Registry } from 'prom-client';
import type { RunView } from '../store.ts';
import type { QueueRunDispatcher } from './dispatcher.ts';

/**
 * Queue mode's metrics on the controller's registry: `bi_worker_runs{worker,status}` (finished runs
 * by the worker that ran them, interrupted ones included) and `bi_worker_up{worker}` (1 up, 0 lost,
 * for the workers listed by GET /v1/reconciler/workers).
 */
export function registerWorkerMetrics(registry: Registry, dispatcher: QueueRunDispatcher): void {
  const runs = new Counter({
    name: 'bi_worker_runs',
    help: 'Pipeline runs finished on a bictl worker, by worker name and status.',
    labelNames: ['worker', 'status'] as const,
    registers: [registry],
  });
  const up = new Gauge({
    name: 'bi_worker_up',
    help: 'Whether a bictl worker is up (1) or lost (0): no heartbeat for BI_WORKER_LOST_AFTER; lost ones are listed for an hour.',
    labelNames: ['worker'] as const,
    registers: [registry],
    collect: () => {
      up.reset();
      for (const w of dispatcher.workers.list()) up.set({ worker: w.name }, w.state === 'up' ? 1 : 0);
    },
  });
  dispatcher.on('finished', (run: RunView) => {
    if (run.worker) runs.inc({ worker: run.worker, status: run.status });
  });
}
