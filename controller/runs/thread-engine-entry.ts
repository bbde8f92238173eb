/**
 * The entry of a run's worker thread (bundled to dist/thread-engine-entry.mjs by thread-engine.ts):
 * runs the streaming engine on the data the main thread sent and posts the hooks back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StreamingPipelineEngine } from './engine/engine.ts';
import { NetworkEgressPolicy } from './engine/egress.ts';
import type { StepProgress } from './types.ts';
import type { WorkerMessage, WorkerRun } from './thread-engine.ts';

const data = workerData as WorkerRun;
const port = parentPort;
if (!port) throw new Error('thread-engine-entry runs in a worker thread only');
const post = (m: WorkerMessage) => port.postMessage(m);
const controller = new AbortController();
port.on('message', (m: { type: string }) => {
  if (m.type === 'abort') controller.abort(new Error('cancelled'));
});
let rejects = 0;
let logs = 0;
// Progress of running steps (one per batch per step) crosses at most every 100 ms per step — the
// recorder writes every 250 ms anyway; any other status change crosses at once, after what is held.
const STEP_POST_MS = 100;
const held = new Map<string, StepProgress>();
let timer: NodeJS.Timeout | undefined;
const flushSteps = (): void => {
  clearTimeout(timer);
  timer = undefined;
  for (const progress of held.values()) post({ type: 'step', progress });
  held.clear();
};
const result = await new StreamingPipelineEngine({ limits: data.limits }).run({
  ...data.input,
  connections: {
    resolve(id) {
      const c = data.connections[id];
      if (!c || 'error' in c) throw new Error(c?.error ?? `Connection ${id} not found`);
      return c.connection;
    },
  },
  egress: new NetworkEgressPolicy(data.egress),
  signal: controller.signal,
  // Only what the recorder keeps crosses the thread boundary.
  hooks: {
    onStep: (progress) => {
      if (progress.status === 'running') {
        held.set(progress.stepId, progress);
        timer ??= setTimeout(flushSteps, STEP_POST_MS);
        return;
      }
      flushSteps();
      post({ type: 'step', progress });
    },
    onReject: (rejected) => {
      if (rejects++ < data.maxRejects) post({ type: 'reject', rejected });
    },
    onLog: (level, message) => {
      if (logs++ < data.maxLogs) post({ type: 'log', level, message });
    },
  },
  now: () => new Date(),
});
flushSteps();
post({ type: 'result', result });
port.close();
