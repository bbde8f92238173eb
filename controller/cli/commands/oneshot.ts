import { Runtime } from '../../runtime.ts';
import type { CommandContext } from '../main.ts';
import { commandConfig } from './config.ts';

/** A runtime that is never started (no watcher): diff and sync drive its reconciler directly. */
export async function withRuntime<T>(ctx: CommandContext, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = new Runtime({ config: commandConfig(ctx), engine: ctx.engine });
  try {
    return await fn(rt);
  } finally {
    await rt.stop();
  }
}
