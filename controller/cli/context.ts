import type { Command } from 'commander';
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
}
