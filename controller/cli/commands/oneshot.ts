import { createRuntime, type Runtime } from '../../runtime.ts';
import { schemasFor, type CommandContext } from '../context.ts';
import { checkStoreSource } from '../../store/source.ts';
import { commandConfig } from './config.ts';

/**
 * A runtime that is never started (no watcher): diff and sync drive its reconciler directly.
 * The store must be kept from the configured source (`record`: sync records it on a new store).
 */
export async function withRuntime<T>(ctx: CommandContext, fn: (rt: Runtime) => Promise<T>, opts: { record?: boolean; anySource?: boolean } = {}): Promise<T> {
  const config = commandConfig(ctx);
  const rt = createRuntime({ config, engine: ctx.engine, schemas: schemasFor(ctx, config.strictManifests) });
  try {
    // `anySource`: commands that touch no manifest (users) work on a store kept from any source;
    // suggesting --adopt-source there would have pruned every object of a git-mode store.
    if (!opts.anySource) checkStoreSource(rt.db, config, { record: opts.record ?? false, adopt: config.adoptSource });
    return await fn(rt);
  } finally {
    await rt.stop();
  }
}
