import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from './server-process.ts';

/** A floor server: a small process of bench/ that prints `listening url=…` once it listens. */
export interface FloorProcess {
  url: string;
  /** CPU time of the process so far (all threads), in ms; undefined off Linux. */
  cpuMs(): number | undefined;
  stop(): void;
}

/** Starts `bench/<script>` with the server's Node flags and `env` (PATH kept). */
export async function startFloor(script: string, env: Record<string, string>): Promise<FloorProcess> {
  // Profiling a floor: BENCH_FLOOR_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' (as BENCH_SERVER_NODE_ARGS for the server).
  const extra = (process.env.BENCH_FLOOR_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, ['--max-semi-space-size=4', ...extra, '--import', 'tsx', join(REPO_ROOT, 'bench', script)], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening url=(\S+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`${script} exited ${code}`)));
  });
  return {
    url,
    cpuMs() {
      try {
        const fields = readFileSync(`/proc/${child.pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
        return (Number(fields[11]) + Number(fields[12])) * 10;
      } catch {
        return undefined;
      }
    },
    stop: () => child.kill('SIGTERM'),
  };
}
