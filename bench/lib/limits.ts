/**
 * Issue 30: where a goal is not met, the bench names the floor that stops it and why no design
 * gets closer. One entry per figure name (as `report.add` names it); `Report.add` attaches it to a
 * figure whose goal a run missed, `spreadOf` to a figure missed in any of the repeated runs.
 * Each text states what was measured, not what is hoped; docs/benchmarks.md has the measurements.
 */
export interface Limit {
  /** The floor (measured in the same run, or a cost of the machine) that bounds the figure. */
  floor: string;
  /** Why no design of the product gets closer to the goal on this machine. */
  why: string;
}

const GIT_FLOOR: Limit = {
  floor: 'the same commits built by one `git fast-import`, one `git push` and `git reset --keep`, measured alone after the load',
  why:
    'a closed loop of N callers carries at most the floor’s N commits per push, plus the callers’ turnaround that no other write can fill; and on 2 cores the server’s HTTP work and the load generator run beside git while the floor runs alone, so the ratio follows the CPU ratio (git’s process start-up and the remote’s unpacking, dear on this VM, are paid by both)',
};

const LIMITS: Record<string, Limit> = {
  'git mode imports/s / commits/s of that floor': GIT_FLOOR,
  'git mode imports/s at 40 connections / commits/s of that floor': GIT_FLOOR,
};

export function limitOf(figure: string): Limit | undefined {
  return LIMITS[figure];
}
