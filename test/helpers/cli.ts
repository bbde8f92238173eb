import { Readable } from 'node:stream';
import { main } from '../../controller/cli/main.ts';
import type { PipelineEngine } from '../../controller/runs/types.ts';
import { testSchemas } from './runtime.ts';

export interface CliResult {
  code: number;
  out: string;
  err: string;
}

/** Runs `bictl <args>` in-process with captured output. */
export async function runCli(args: string[], opts: { env?: NodeJS.ProcessEnv; stdin?: string; engine?: PipelineEngine } = {}): Promise<CliResult> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(['node', 'bictl', ...args], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: opts.env ?? {},
    stdin: Readable.from([opts.stdin ?? '']),
  }, { engine: opts.engine, schemas: testSchemas() });
  return { code, out: out.join('\n'), err: err.join('\n') };
}
