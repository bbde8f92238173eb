import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NotFoundError, UnavailableError } from '../../errors.ts';
import { GitRepo } from '../../git/repo.ts';
import { revertAndPush } from '../../sources/git.ts';
import type { CommandContext } from '../context.ts';
import { commandConfig } from './config.ts';

/**
 * `bictl rollback <revision>`: a revert commit on the branch, pushed (history is never
 * rewritten, so the controller and other automation simply apply it like any other push).
 * It works in a throw-away clone: the running controller owns its working clone and its lock.
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
