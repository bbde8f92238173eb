import { mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ROOT } from '../paths.ts';
import type { NetworkEgressPolicyOptions } from './engine/egress.ts';
import { DEFAULT_SOURCE_LIMITS, type SourceLimits } from './engine/sources/limits.ts';
import { MAX_LOG_LINES, MAX_REJECTS_KEPT } from './store.ts';
import { withSemiSpace } from './worker-heap.ts';
import type { EngineInput, EngineResult, LogLevel, PipelineEngine, RejectedRow, ResolvedConnection, StepProgress } from './types.ts';

/** What a run's worker gets: the input without functions, its connections resolved up front. */
export interface WorkerRun {
  input: Pick<EngineInput, 'runId' | 'pipelineId' | 'source' | 'destination' | 'steps' | 'filesDir' | 'owner'>;
  /** Each connection the pipeline names, resolved — or the error resolving it raised (thrown when the engine asks). */
  connections: Record<string, { connection: ResolvedConnection } | { error: string }>;
  egress: Pick<NetworkEgressPolicyOptions, 'listen' | 'allowHosts'>;
  limits: SourceLimits;
  maxRejects: number;
  maxLogs: number;
}

export type WorkerMessage =
  | { type: 'step'; progress: StepProgress }
  | { type: 'reject'; rejected: RejectedRow }
  | { type: 'log'; level: LogLevel; message: string }
  | { type: 'result'; result: EngineResult };

const ENTRY = join(ROOT, 'controller', 'runs', 'thread-engine-entry.ts');
const BUNDLE = join(ROOT, 'dist', 'thread-engine-entry.mjs');

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestSource(p));
    else if (e.name.endsWith('.ts')) newest = Math.max(newest, statSync(p).mtimeMs);
  }
  return newest;
}

let bundling: Promise<string> | undefined;

/**
 * The worker's plain-JavaScript bundle (esbuild, ~30 ms), rebuilt when a controller source is
 * newer — as the `bictl` launcher does for itself: a worker cannot load TypeScript by itself.
 */
export function workerBundle(): Promise<string> {
  return (bundling ??= (async () => {
    let fresh: boolean;
    try {
      fresh = statSync(BUNDLE).mtimeMs >= newestSource(join(ROOT, 'controller'));
    } catch {
      fresh = false;
    }
    if (!fresh) {
      const { build } = await import('esbuild');
      const out = await build({ entryPoints: [ENTRY], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', write: false, logLevel: 'warning' });
      mkdirSync(dirname(BUNDLE), { recursive: true });
      const tmp = `${BUNDLE}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(tmp, out.outputFiles[0].contents);
      renameSync(tmp, BUNDLE);
    }
    return BUNDLE;
  })().finally(() => {
    bundling = undefined;
  }));
}

/** Every connection ID the pipeline names (source, destination, each step's config). */
function connectionIds(input: EngineInput): string[] {
  const ids = new Set([input.source.connectionId, input.destination.connectionId]);
  for (const s of input.steps) if (typeof s.config.connectionId === 'string') ids.add(s.config.connectionId);
  return [...ids].filter(Boolean);
}

const failed = (input: EngineInput, error: string): EngineResult => ({
  status: 'failed',
  rowsRead: 0,
  rowsWritten: 0,
  rowsRejected: 0,
  error,
  steps: input.steps.map((s) => ({ stepId: s.id, type: s.type, name: s.name, status: 'skipped', rowsIn: 0, rowsOut: 0, rowsRejected: 0, durationMs: 0, message: null })),
});

/**
 * Runs the streaming engine in a worker thread, one per run, so a run's per-row work and its
 * garbage never stall the API's event loop. Connections are resolved here (the store and the
 * secrets stay in the main thread); the egress policy is rebuilt in the worker from its options.
 */
/**
 * The old generation of a run's worker. A run streams batches, so its live data is small; capped,
 * V8 sizes the worker's heap to it instead of to the machine (1M rows × 10 columns: server peak RSS
 * 345 → 253 MB, same throughput). A run that needs more fails with `engine worker: … memory limit`.
 */
export const WORKER_OLD_GENERATION_MB = 128;

/** The young generation of a run's worker: V8's default semi-space, whatever the server runs with (see worker-heap.ts). */
export const WORKER_SEMI_SPACE_MB = 16;

export class WorkerThreadEngine implements PipelineEngine {
  readonly #egress: WorkerRun['egress'];
  readonly #limits: SourceLimits;
  constructor(opts: { egress: WorkerRun['egress']; limits?: SourceLimits }) {
    this.#egress = opts.egress;
    this.#limits = opts.limits ?? DEFAULT_SOURCE_LIMITS;
  }

  async run(input: EngineInput): Promise<EngineResult> {
    const connections: WorkerRun['connections'] = {};
    for (const id of connectionIds(input)) {
      try {
        connections[id] = { connection: input.connections.resolve(id) };
      } catch (err) {
        connections[id] = { error: (err as Error).message };
      }
    }
    let entry: string;
    try {
      entry = await workerBundle();
    } catch (err) {
      return failed(input, `engine worker could not be built: ${(err as Error).message}`);
    }
    const { runId, pipelineId, source, destination, steps, filesDir, owner } = input;
    const data: WorkerRun = {
      input: { runId, pipelineId, source, destination, steps, filesDir, owner: owner ?? null },
      connections,
      egress: this.#egress,
      limits: this.#limits,
      maxRejects: MAX_REJECTS_KEPT,
      maxLogs: MAX_LOG_LINES,
    };
    const worker = withSemiSpace(WORKER_SEMI_SPACE_MB, () => new Worker(entry, { workerData: data, resourceLimits: { maxOldGenerationSizeMb: WORKER_OLD_GENERATION_MB } }));
    return new Promise<EngineResult>((resolve) => {
      let result: EngineResult | undefined;
      const abort = () => worker.postMessage({ type: 'abort' });
      if (input.signal.aborted) abort();
      else input.signal.addEventListener('abort', abort, { once: true });
      worker.on('message', (m: WorkerMessage) => {
        if (m.type === 'step') input.hooks.onStep(m.progress);
        else if (m.type === 'reject') input.hooks.onReject(m.rejected);
        else if (m.type === 'log') input.hooks.onLog(m.level, m.message);
        else result = m.result;
      });
      worker.on('error', (err) => {
        result ??= failed(input, `engine worker: ${err.message}`);
      });
      worker.on('exit', (code) => {
        input.signal.removeEventListener('abort', abort);
        resolve(result ?? failed(input, `engine worker exited (${code}) without a result`));
      });
    });
  }
}
