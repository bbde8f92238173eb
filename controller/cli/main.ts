import { Command, CommanderError } from 'commander';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { PipelineEngine } from '../runs/types.ts';
import { processIO, type CliIO } from './io.ts';
import { packageVersion } from './version.ts';
import { registerBackup } from './commands/backup.ts';
import { registerDiff } from './commands/diff.ts';
import { registerRollback } from './commands/rollback.ts';
import { registerRun } from './commands/run.ts';
import { registerServe } from './commands/serve.ts';
import { registerStatus } from './commands/status.ts';
import { registerSync } from './commands/sync.ts';
import { registerTemplate } from './commands/template.ts';
import { registerUsers } from './commands/users.ts';
import { registerValidate } from './commands/validate.ts';
import { registerWorker } from './commands/worker.ts';
import { registerLifecycle } from './commands/lifecycle.ts';

/**
 * Runs `bictl` with `argv` (node, script, ...args); resolves to the exit code. `engine`: tests run
 * pipelines with a fake; `schemas`: tests share one compiled registry.
 */
export async function main(argv: string[], io: CliIO = processIO, opts: { engine?: PipelineEngine; schemas?: SchemaRegistry } = {}): Promise<number> {
  let code = 0;
  const setCode = (c: number) => {
    code = c;
  };
  const program = new Command('bictl')
    .description('bi-controller: reconcile BI manifests from a folder or git repo into the platform')
    .version(packageVersion(), '-V, --version', 'print the version of bictl')
    .option('--manifests <dir>', 'manifests directory (env BI_MANIFESTS_DIR, default ./workspace/manifests)')
    .option('--db <path>', 'SQLite store (env BI_DB_PATH, default ./data/bi.sqlite)')
    .option('--adopt-source', "switch the store to the configured manifests source (folder or git URL/branch/path) when it was kept from another one")
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) });
  const ctx = { program, io, setCode, engine: opts.engine, schemas: opts.schemas };
  for (const register of [registerServe, registerValidate, registerDiff, registerSync, registerUsers, registerStatus, registerRollback, registerRun, registerWorker, registerTemplate, registerBackup, registerLifecycle]) {
    register(ctx);
  }
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode;
    io.err(`bictl: ${(err as Error).message}`);
    return 1;
  }
  return code;
}
