/**
 * The entry of a run's worker thread (bundled to dist/engine-worker.mjs by worker-engine.ts):
 * runs the streaming engine on the data the main thread sent and posts the hooks back.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { StreamingPipelineEngine } from './engine/engine.ts';
import { NetworkEgressPolicy } from './engine/egress.ts';
import type { WorkerMessage, WorkerRun } from './worker-engine.ts';

const data = workerData as WorkerRun;
const port = parentPort;
if (!port) throw new Error('engine-worker runs in a worker thread only');
const post = (m: WorkerMessage) => port.postMessage(m);
const controller = new AbortController();
port.on('message', (m: { type: string }) => {
  if (m.type === 'abort') controller.abort(new Error('cancelled'));
});
let rejects = 0;
let logs = 0;
const result = await new StreamingPipelineEngine().run({
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
    onStep: (progress) => post({ type: 'step', progress }),
    onReject: (rejected) => {
      if (rejects++ < data.maxRejects) post({ type: 'reject', rejected });
    },
    onLog: (level, message) => {
      if (logs++ < data.maxLogs) post({ type: 'log', level, message });
    },
  },
  now: () => new Date(),
});
post({ type: 'result', result });
port.close();
