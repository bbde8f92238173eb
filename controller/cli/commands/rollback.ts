import type { CommandContext } from '../main.ts';

// Filled in by its issue.
export function registerRollback(_ctx: CommandContext): void {}
