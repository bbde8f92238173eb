import { setFlagsFromString } from 'node:v8';
import type { Worker } from 'node:worker_threads';

/**
 * The young generation of a thread started here, whatever the process's own.
 *
 * `npm start` runs the server with `--max-semi-space-size=4` (see README, "Memory"): the API's
 * event loop allocates little per request and a small young generation keeps the peak RSS of a
 * 10,000-file sync ~25 MB lower. V8 reads that flag for every heap it creates, workers included,
 * and it takes precedence over a worker's `resourceLimits.maxYoungGenerationSizeMb` — but a
 * streaming pipeline run allocates per row and needs V8's default (16 MB semi-spaces; with 4 MB a
 * run went from 410,000 to 250,000 rows/s). The flag is read when the worker's heap is set up, on
 * the worker's own thread, so it is set just before the worker is made and put back once every
 * worker being made this way is online.
 */
export function withSemiSpace(semiSpaceMb: number, create: () => Worker): Worker {
  if (pending++ === 0) setFlagsFromString(`--max-semi-space-size=${semiSpaceMb}`);
  const restore = () => {
    if (--pending === 0) setFlagsFromString(`--max-semi-space-size=${PROCESS_SEMI_SPACE_MB}`);
  };
  let worker: Worker;
  try {
    worker = create();
  } catch (err) {
    restore();
    throw err;
  }
  // Whichever comes first (a worker that fails to start is never online); none of them stays listening.
  const events = ['online', 'error', 'exit'] as const;
  const done = () => {
    events.forEach((e) => worker.off(e, done));
    restore();
  };
  events.forEach((e) => worker.once(e, done));
  return worker;
}

let pending = 0;

/** The process's own `--max-semi-space-size` (command line or NODE_OPTIONS), 0 for V8's default. */
export function processSemiSpaceMb(execArgv: readonly string[] = process.execArgv, nodeOptions = process.env.NODE_OPTIONS ?? ''): number {
  let mb = 0;
  const args = [...nodeOptions.split(/\s+/).filter(Boolean), ...execArgv];
  for (let i = 0; i < args.length; i++) {
    const m = /^--max[-_]semi[-_]space[-_]size(?:=(\d+))?$/.exec(args[i]);
    if (m) mb = Number(m[1] ?? args[++i]) || 0;
  }
  return mb;
}

const PROCESS_SEMI_SPACE_MB = processSemiSpaceMb();
