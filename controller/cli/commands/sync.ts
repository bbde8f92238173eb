import type { CommandContext } from '../context.ts';
import { withRuntime } from './oneshot.ts';

export function registerSync(ctx: CommandContext): void {
  ctx.program
    .command('sync')
    .description('apply the manifests to the store now (a full sync)')
    .option('--allow-mass-prune', 'confirm a sync that prunes more than half of the objects')
    .action(async (opts: { allowMassPrune?: boolean }) => {
      await withRuntime(ctx, async (rt) => {
        const report = await rt.syncNow({ allowMassPrune: opts.allowMassPrune });
        ctx.io.out(
          `${report.applied.length} applied, ${report.skipped} unchanged, ${report.pruned.length} pruned, ${report.failed.length} failed, ${report.invalid.length} invalid`,
        );
        for (const key of report.failed) ctx.io.err(`failed: ${key}: ${rt.reconciler.status.get(key)?.message ?? ''}`);
        for (const key of report.invalid) ctx.io.err(`invalid: ${key}: ${rt.reconciler.status.get(key)?.message ?? ''}`);
        if (report.pruneBlocked) {
          ctx.io.err(
            `mass prune refused: ${report.pruneBlocked.keys.length} of ${report.pruneBlocked.live} objects would be removed; run bictl sync --allow-mass-prune to confirm`,
          );
        }
        if (report.failed.length || report.invalid.length || report.pruneBlocked) ctx.setCode(1);
      }, { record: true });
    });
}
