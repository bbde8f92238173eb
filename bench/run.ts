// `npm run bench`: real server processes on loopback in temp folders, autocannon as the load
// generator, one JSON line per figure, a table at the end, everything in bench/results.json.
//
//   npm run bench                      all benchmarks, full sizes
//   npm run bench -- --quick           small sizes, a smoke run of the harness (no results.json)
//   npm run bench -- --only import,scale
//   npm run bench -- --only import,onboard --modes git   the write benchmarks in one mode only
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { round } from './lib/load.ts';
import { machine, Report } from './lib/report.ts';
import { REPO_ROOT } from './lib/server-process.ts';
import type { Mode } from './lib/setup.ts';
import { bigBodiesBench } from './scenarios/big-bodies.ts';
import { httpFloor } from './scenarios/http-floor.ts';
import { importBench } from './scenarios/import.ts';
import { onboardBench } from './scenarios/onboard.ts';
import { apiSourceBench } from './scenarios/api-source.ts';
import { pipelineBench } from './scenarios/pipeline.ts';
import { registryBench } from './scenarios/registry.ts';
import { scaleBench } from './scenarios/scale.ts';
import { clientSetBench } from './scenarios/clientset.ts';
import { slotsBench } from './scenarios/slots.ts';
import { workersBench } from './scenarios/workers.ts';

const ALL = ['http', 'import', 'onboard', 'scale', 'registry', 'pipeline', 'clientset', 'slots', 'bodies', 'workers'] as const;
type Bench = (typeof ALL)[number];

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    out: { type: 'string' },
    modes: { type: 'string' },
  },
});
const only = new Set((values.only ?? ALL.join(',')).split(',').map((s) => s.trim()) as Bench[]);
for (const b of only) if (!ALL.includes(b)) throw new Error(`unknown benchmark ${b}; one of ${ALL.join(', ')}`);
const MODES = ['directory', 'git'] as const satisfies readonly Mode[];
const modes = (values.modes ?? MODES.join(',')).split(',').map((s) => s.trim()) as Mode[];
for (const m of modes) if (!MODES.includes(m as (typeof MODES)[number])) throw new Error(`unknown mode ${m}; one of ${MODES.join(', ')}`);
const quick = values.quick ?? false;
const sizes = quick
  ? { seconds: 2, onboardings: 20, clients: 500, edits: 5, rows: 5_000, pipelineRows: 20_000, tenants: 100, runs: 1_000, flood: 10 }
  : { seconds: 10, onboardings: 150, clients: 10_000, edits: 30, rows: 100_000, pipelineRows: 1_000_000, tenants: 1_000, runs: 10_000, flood: 40 };

// A folder of this run's own: two bench runs at once (a profile beside a full run) do not remove each other's files.
const base = join(REPO_ROOT, 'bench', 'tmp', `run-${process.pid}`);
const report = new Report();
const m = machine();
process.stdout.write(`${JSON.stringify({ machine: m, quick })}\n`);

const steps: Record<Bench, () => Promise<void>> = {
  http: () => httpFloor(report, { seconds: sizes.seconds }),
  import: () => importBench(report, { seconds: sizes.seconds, modes, base }),
  onboard: () => onboardBench(report, { amount: sizes.onboardings, modes, base }),
  scale: () => scaleBench(report, { clients: sizes.clients, edits: sizes.edits, base }),
  registry: () => registryBench(report, { rows: sizes.rows, seconds: sizes.seconds, base }),
  pipeline: async () => {
    await pipelineBench(report, { rows: sizes.pipelineRows, base });
    await apiSourceBench(report, { base, capMiB: quick ? 32 : 256 });
  },
  clientset: () => clientSetBench(report, { tenants: sizes.tenants, base }),
  slots: () => slotsBench(report, { runs: sizes.runs, flood: sizes.flood, base }),
  bodies: () => bigBodiesBench(report, { seconds: sizes.seconds, base }),
  workers: () => workersBench(report, { rows: sizes.pipelineRows, base }),
};

let failed = false;
for (const name of ALL) {
  if (!only.has(name)) continue;
  report.group = name;
  try {
    await steps[name]();
  } catch (err) {
    failed = true;
    report.skip(name, 'run', `benchmark crashed: ${(err as Error).message.split('\n')[0]}`);
    process.stderr.write(`${(err as Error).stack ?? err}\n`);
  }
}
rmSync(base, { recursive: true, force: true });
m.loadavg = { start: m.loadavg?.start ?? [], end: loadavg().map((l) => round(l, 2)) };

process.stdout.write(`\n${m.nproc} × ${m.cpu}, ${m.memoryGb} GB, Node ${m.node}${quick ? ' (quick sizes)' : ''}\n${report.table()}\n`);
// A quick run is a smoke test of the harness: it keeps the last full figures unless told --out.
const out = values.out ?? (quick ? undefined : join(REPO_ROOT, 'bench', 'results.json'));
if (out) {
  report.write(out, m, values.only ? only : undefined);
  process.stdout.write(`written ${out}\n`);
}
process.exitCode = failed ? 1 : 0;
