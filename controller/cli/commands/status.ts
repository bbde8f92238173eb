import type { CommandContext } from '../main.ts';

// Filled in by its issue.
export function registerStatus(_ctx: CommandContext): void {}
