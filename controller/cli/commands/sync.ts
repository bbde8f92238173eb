import type { SyncReport } from '../../reconciler/types.ts';
import { claimStore, releaseStore, StoreOwnedError, ownedMessage, type StoreOwner } from '../../store/owner.ts';
import type { CommandContext } from '../context.ts';
import { callOwner } from '../owner.ts';
import { commandConfig } from './config.ts';
import { withRuntime } from './oneshot.ts';

/** What to do instead when a server owns the store and its control socket cannot be reached. */
export function syncElsewhere(owner: StoreOwner): string {
  if (owner.role !== 'serve') return 'wait for it to finish';
  const api = owner.url ? `POST ${owner.url}/v1/reconciler/sync as an admin` : 'POST /v1/reconciler/sync on it as an admin';
  return `sync through it (${api}, or Sync in the console), or stop it and run bictl sync again`;
}

/** Prints a sync's report the same way whether this process or the server ran it; sets the exit code. */
export function printSyncReport(ctx: CommandContext, report: SyncReport, messageOf: (key: string) => string, prefix = ''): void {
  ctx.io.out(
    `${prefix}${report.applied.length} applied, ${report.skipped} unchanged, ${report.pruned.length} pruned, ${report.failed.length} failed, ${report.invalid.length} invalid`,
  );
  for (const key of report.failed) ctx.io.err(`failed: ${key}: ${messageOf(key)}`);
  for (const key of report.invalid) ctx.io.err(`invalid: ${key}: ${messageOf(key)}`);
  if (report.pruneBlocked) {
    ctx.io.err(
      `mass prune refused: ${report.pruneBlocked.keys.length} of ${report.pruneBlocked.live} objects would be removed; run bictl sync --allow-mass-prune to confirm`,
    );
  }
  if (report.failed.length || report.invalid.length || report.pruneBlocked) ctx.setCode(1);
}

/**
 * `bictl sync`. The store has one writer: with a server running on it the sync goes through the
 * server's control socket (the server's own reconciler applies, nothing races it); a sync in this
 * process claims the store for its duration, so a server does not start meanwhile.
 */
export function registerSync(ctx: CommandContext): void {
  ctx.program
    .command('sync')
    .description('apply the manifests to the store now (a full sync; through the server when one runs on the store)')
    .option('--allow-mass-prune', 'confirm a sync that prunes more than half of the objects')
    .action(async (opts: { allowMassPrune?: boolean }) => {
      const config = commandConfig(ctx);
      try {
        claimStore(config.dataDir, 'sync', syncElsewhere);
      } catch (err) {
        if (!(err instanceof StoreOwnedError)) throw err;
        const owner = err.owner;
        const answer = owner.role === 'serve' ? await callOwner(owner, '/sync', { allowMassPrune: opts.allowMassPrune === true }) : undefined;
        if (!answer) {
          ctx.io.err(err.message);
          return ctx.setCode(1);
        }
        if (!answer.ok) {
          ctx.io.err(ownedMessage(owner, `its sync failed (${answer.error}); see its log`));
          return ctx.setCode(1);
        }
        const body = answer.body as { report: SyncReport; messages: Record<string, string> };
        return printSyncReport(ctx, body.report, (key) => body.messages[key] ?? '', `through the server (pid ${owner.pid}): `);
      }
      try {
        await withRuntime(ctx, async (rt) => {
          const report = await rt.syncNow({ allowMassPrune: opts.allowMassPrune });
          printSyncReport(ctx, report, (key) => rt.reconciler.status.get(key)?.message ?? '');
        }, { record: true });
      } finally {
        releaseStore(config.dataDir);
      }
    });
}
