import type { Command } from 'commander';
import type { SchemaRegistry } from '../manifest/validator.ts';
import type { PipelineEngine } from '../runs/types.ts';
import type { CliIO } from './io.ts';

/** Shared flags every command understands (they override the environment). */
export interface GlobalFlags {
  manifests?: string;
  db?: string;
  adoptSource?: boolean;
}

export interface CommandContext {
  program: Command;
  io: CliIO;
  setCode(code: number): void;
  /** The pipeline engine of one-shot runtimes (default: the runtime's). */
  engine?: PipelineEngine;
  /** Compiled schemas to use instead of compiling them again (tests share one registry); see schemasFor. */
  schemas?: SchemaRegistry;
}

/** The shared compiled schemas when they are as strict as asked, else undefined (compile them). */
export function schemasFor(ctx: Pick<CommandContext, 'schemas'>, strict: boolean): SchemaRegistry | undefined {
  return ctx.schemas && ctx.schemas.strict === strict ? ctx.schemas : undefined;
}
