import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lookupAll } from '../../../../controller/runs/engine/egress.ts';
import { StreamingPipelineEngine, type StreamingEngineOptions } from '../../../../controller/runs/engine/engine.ts';
import type { StepContext, StepRunner } from '../../../../controller/runs/engine/step.ts';
import type {
  Batch,
  ConnectionResolver,
  EgressPolicy,
  EngineInput,
  EngineResult,
  RejectedRow,
  ResolvedConnection,
  Row,
  RunStep,
  StepProgress,
} from '../../../../controller/runs/types.ts';
import type { PipelineSource, StepConfig, StepType } from '../../../../controller/kinds/pipeline/types.ts';

/** Runs one step runner over in-memory batches; answers what came out and what was rejected. */
export async function runStep(runner: StepRunner, batches: Batch[]): Promise<{ out: Row[]; rejects: { row: Row; reasons: string[] }[] }> {
  const rejects: { row: Row; reasons: string[] }[] = [];
  const ctx: StepContext = {
    step: { id: 'step-1-1', type: 'transform', name: 'T', config: {} },
    signal: new AbortController().signal,
    reject: (row, reasons) => rejects.push({ row, reasons }),
    log: () => {},
  };
  const out: Row[] = [];
  for await (const b of runner.run((async function* () { yield* batches; })(), ctx)) out.push(...b);
  return { out, rejects };
}

/** Every host, resolved by the system (the engine tests' sources are loopback listeners). */
export const allowAll: EgressPolicy = {
  check: async () => {},
  endpoint: async (host) => (await lookupAll(host.replace(/^\[|\]$/g, ''))).map(({ address, family }) => ({ address, family: family === 6 ? 6 : 4 })),
};

export function resolver(connections: Record<string, ResolvedConnection>): ConnectionResolver {
  return {
    resolve(id) {
      const c = connections[id];
      if (!c) throw new Error(`Connection ${id} not found`);
      return c;
    },
  };
}

export interface Recorded {
  result: EngineResult;
  progress: StepProgress[];
  rejects: RejectedRow[];
  logs: string[];
}

let counter = 0;

/** Steps from `[type, config]` pairs, IDs `step-1-<index>`, the first being the generated source step. */
export function steps(...list: [StepType, StepConfig][]): RunStep[] {
  return list.map(([type, config], i) => ({ id: `step-1-${i}`, type, name: `${type}-${i}`, config }));
}

export async function runEngine(
  input: Partial<EngineInput> & { steps: RunStep[]; source?: PipelineSource },
  opts: StreamingEngineOptions = {},
): Promise<Recorded> {
  const progress: StepProgress[] = [];
  const rejects: RejectedRow[] = [];
  const logs: string[] = [];
  const engine = new StreamingPipelineEngine({ sleep: async () => {}, ...opts });
  const result = await engine.run({
    runId: `RUN-${++counter}`,
    pipelineId: 'DP-1',
    source: input.source ?? { connectionId: 'C1', type: 'file' },
    destination: { connectionId: 'C1', type: 'database', vendor: 'POSTGRESQL' },
    connections: input.connections ?? resolver({ C1: { connectionId: 'C1', vendor: 'POSTGRESQL' } }),
    egress: input.egress ?? allowAll,
    filesDir: input.filesDir ?? '/nonexistent',
    owner: input.owner ?? null,
    signal: input.signal ?? new AbortController().signal,
    hooks: { onStep: (p) => progress.push(p), onReject: (r) => rejects.push(r), onLog: (_l, m) => logs.push(m) },
    now: () => new Date(0),
    steps: input.steps,
  });
  return { result, progress, rejects, logs };
}

/** A temp folder with files; `cleanup()` removes it. */
export function filesFolder(files: Record<string, string>): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'bi-files-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}
