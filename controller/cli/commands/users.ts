import type { CommandContext } from '../main.ts';

// Filled in by its issue.
export function registerUsers(_ctx: CommandContext): void {}
