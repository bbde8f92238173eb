import { Worker } from 'node:worker_threads';
import { startFloor, type FloorProcess } from './floor-process.ts';
import { percentile, round } from './load.ts';

/** The probe's loop, in a thread of its own: the bench's own work (writing 5,000 files) never delays a request. */
const PROBE = `
const { parentPort, workerData } = require('node:worker_threads');
let running = true;
const latencies = [];
let errors = 0;
parentPort.on('message', () => { running = false; });
(async () => {
  while (running) {
    const started = performance.now();
    try {
      const res = await fetch(workerData.url);
      await res.arrayBuffer();
      if (res.ok) latencies.push(performance.now() - started);
      else errors++;
    } catch {
      errors++;
    }
    await new Promise((r) => setTimeout(r, workerData.pauseMs));
  }
  parentPort.postMessage({ latencies, errors });
})();
`;

export type ProbeResult = {
  p50: number;
  p99: number;
  max: number;
  requests: number;
  errors: number;
};

/**
 * Asks `GET /healthz` one request at a time (a short pause between) while something runs on the
 * server, and keeps each latency: how long the API stalls during a big sync or apply.
 */
export class HealthProbe {
  readonly #worker: Worker;

  constructor(baseUrl: string, opts: { pauseMs?: number } = {}) {
    this.#worker = new Worker(PROBE, { eval: true, workerData: { url: `${baseUrl}/healthz`, pauseMs: opts.pauseMs ?? 10 } });
  }

  /** Stops probing; p50, p99 and max in ms, the number of answers and of failed requests. */
  async stop(): Promise<ProbeResult> {
    const done = new Promise<{ latencies: number[]; errors: number }>((resolve, reject) => {
      this.#worker.once('message', resolve);
      this.#worker.once('error', reject);
    });
    this.#worker.postMessage('stop');
    const { latencies: l, errors } = await done;
    await this.#worker.terminate();
    return {
      p50: round(percentile(l, 50), 1),
      p99: round(percentile(l, 99), 1),
      max: round(l.length ? Math.max(...l) : Number.NaN, 1),
      requests: l.length,
      errors,
    };
  }
}

/** A probe of the server's `/healthz` and, in the same phase, one of an idle bare Fastify process's. */
export interface PairedProbe {
  stop(): Promise<{ server: ProbeResult; idle: ProbeResult | undefined }>;
}

/**
 * Probes `/healthz` of the server and of an idle bare Fastify process (bench/bare-server.ts) at
 * once: on a machine other sessions share, the idle process's p99 is how long any process waits
 * to be scheduled — the floor under the server's p99 that no code of the server can go below.
 */
export async function probeWithIdleFloor(serverUrl: string): Promise<PairedProbe> {
  let idle: FloorProcess | undefined;
  try {
    idle = await startFloor('bare-server.ts', {});
  } catch {
    idle = undefined;
  }
  const server = new HealthProbe(serverUrl);
  const floor = idle ? new HealthProbe(idle.url) : undefined;
  return {
    async stop() {
      try {
        return { server: await server.stop(), idle: floor ? await floor.stop() : undefined };
      } finally {
        idle?.stop();
      }
    },
  };
}
