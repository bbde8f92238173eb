import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError, UnavailableError } from '../../errors.ts';
import { GitRepo } from '../../git/repo.ts';
import { revertAndPush } from '../../sources/git.ts';
import type { SyncReport } from '../../reconciler/types.ts';
import { ownedMessage, storeOwner } from '../../store/owner.ts';
import type { CommandContext } from '../context.ts';
import { callOwner } from '../owner.ts';
import { commandConfig } from './config.ts';
import { printSyncReport } from './sync.ts';

/**
 * `bictl rollback <revision>`: a revert commit on the branch, pushed (history is never
 * rewritten, so the controller and other automation simply apply it like any other push).
 * With a server running on the store it goes through the server (its control socket: the revert
 * under the server's writer lock, then its sync), or refuses; alone it works in a throw-away clone.
 */
export function registerRollback(ctx: CommandContext): void {
  ctx.program
    .command('rollback <revision>')
    .description('revert a commit of the manifests repository with a new commit and push it (git mode)')
    .option('-m, --message <text>', 'commit message (default: rollback: revert <revision>)')
    .action(async (revision: string, opts: { message?: string }) => {
      const config = commandConfig(ctx);
      const git = config.git;
      if (!git) {
        ctx.io.err('bictl rollback: needs git mode (set BI_GIT_URL); in directory mode restore the file from your own history');
        return ctx.setCode(2);
      }
      const owner = storeOwner(config.dataDir);
      if (owner?.role === 'serve') {
        const answer = await callOwner(owner, '/rollback', { revision, ...(opts.message ? { message: opts.message } : {}) });
        if (!answer) {
          ctx.io.err(ownedMessage(owner, `roll back through it once it answers on its control socket, or stop it and run bictl rollback again`));
          return ctx.setCode(1);
        }
        if (!answer.ok) {
          ctx.io.err(`bictl rollback: ${answer.error}`);
          return ctx.setCode(1);
        }
        const body = answer.body as { revert: string | null; report: SyncReport; messages: Record<string, string> };
        if (!body.revert) ctx.io.out(`nothing to revert: ${revision} changes nothing on ${git.branch} any more`);
        else ctx.io.out(`reverted ${revision} with ${body.revert} on ${git.branch} through the server (pid ${owner.pid}), which applied it:`);
        return printSyncReport(ctx, body.report, (key) => body.messages[key] ?? '');
      }
      const dir = await mkdtemp(join(tmpdir(), 'bictl-rollback-'));
      try {
        const repo = new GitRepo({ dir, url: git.url, branch: git.branch, committer: { name: git.authorName, email: git.authorEmail } });
        const sha = await revertAndPush(repo, revision, { name: git.authorName, email: git.authorEmail }, {
          message: opts.message,
          sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        });
        if (!sha) {
          ctx.io.out(`nothing to revert: ${revision} changes nothing on ${git.branch} any more`);
          return;
        }
        ctx.io.out(`reverted ${revision} with ${sha} on ${git.branch}; the controller applies it on its next poll or webhook`);
      } catch (err) {
        if (!(err instanceof NotFoundError || err instanceof UnavailableError)) throw err;
        ctx.io.err(`bictl rollback: ${err.message}`);
        ctx.setCode(1);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
}
