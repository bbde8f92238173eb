import { UnavailableError } from '../errors.ts';
import { backoffDelay, type BackoffPolicy } from '../lib/backoff.ts';
import { gitMessage, isNonFastForward, MissingBranchError, type GitRepo } from './repo.ts';

export interface PublishOptions {
  /** Pushes tried in all (the first included). */
  attempts?: number;
  sleep: (ms: number) => Promise<void>;
  backoff?: BackoffPolicy;
  random?: () => number;
  /** Pushes the change (default: the clone's HEAD). */
  push?: () => Promise<void>;
  /**
   * Puts the change on top of the fetched remote head `head`; false when it conflicts
   * (default: `git rebase` of the clone's local commits).
   */
  rebase?: (head: string) => Promise<boolean>;
}

/** Delays between push attempts: short, since an API caller is waiting. */
export const PUSH_BACKOFF: BackoffPolicy = { baseMs: 200, maxMs: 2000, jitter: 0.5 };

/**
 * Pushes the local commits. When the remote moved meanwhile: fetch, rebase the local commits
 * onto it and push again, a bounded number of times with backoff. Never forces, so no commit
 * on the remote is ever lost. Resolves to whether foreign commits were rebased under ours;
 * throws UnavailableError when it cannot push (the caller resets the clone).
 */
export async function publish(repo: GitRepo, opts: PublishOptions): Promise<{ rebased: boolean }> {
  const attempts = Math.max(1, opts.attempts ?? 5);
  const policy = opts.backoff ?? PUSH_BACKOFF;
  let rebased = false;
  const push = opts.push ?? (() => repo.push());
  const rebase = opts.rebase ?? ((head: string) => repo.rebase(head));
  let last: unknown;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    try {
      await push();
      return { rebased };
    } catch (err) {
      last = err;
    }
    if (attempt === attempts) break;
    if (!isNonFastForward(last)) {
      // The remote is unreachable or refused for another reason: wait, then try again.
      await opts.sleep(backoffDelay(attempt, policy, opts.random));
      continue;
    }
    // The first conflict is resolved at once; repeated ones back off (a busy branch).
    if (attempt > 1) await opts.sleep(backoffDelay(attempt - 1, policy, opts.random));
    let head: string | null;
    try {
      head = await repo.fetch();
    } catch (err) {
      if (err instanceof MissingBranchError) throw err;
      last = err;
      continue;
    }
    if (!head) continue;
    if (!(await rebase(head))) {
      throw new UnavailableError(`git: the change conflicts with a newer commit on ${repo.branch}; nothing was written`);
    }
    rebased = true;
  }
  throw new UnavailableError(`git: could not push to ${repo.branch} after ${attempts} attempts: ${gitMessage(last)}`);
}
