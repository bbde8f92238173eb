import type { Cancel, Scheduler } from '../clock.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/db.ts';
import type { Clock } from '../types.ts';

/** Runs of each pipeline kept whatever their age (docs/contract/design.md: the last 20). */
export const RUNS_KEPT_PER_PIPELINE = 20;
export const RETENTION_INTERVAL_MS = 3_600_000;
/** Ended runs looked at per batch; rows deleted per batch (a run, its log lines and rejects: up to 2,001), and runs. */
const SCAN_BATCH = 500;
const DELETE_ROWS = 1000;
const DELETE_RUNS = 50;

export interface RunRetentionOptions {
  db: Store;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  /** BI_RUN_RETENTION: ended runs older than this are deleted (beyond the last 20 of their pipeline). */
  retentionMs: number;
  /** How often the sweep runs (default hourly; once at start). */
  intervalMs?: number;
  keepPerPipeline?: number;
  /** Lets the event loop run between batches (default setImmediate). */
  pause?: () => Promise<void>;
}

export interface SweepResult {
  runs: number;
  logs: number;
  rejects: number;
  batches: number;
}

interface Candidate {
  run_id: string;
  pipeline_id: string;
  stamp: number;
  finished_at: string;
  log_lines: number;
  rejects_kept: number;
}

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Deletes run records, their logs and rejects once they ended longer than BI_RUN_RETENTION ago,
 * always keeping the last 20 runs of each pipeline (runs of a removed pipeline too). Each batch
 * is one short transaction and the event loop runs between batches, so a sweep of a large
 * backlog never holds the process. SQLite keeps the freed pages for new rows (auto_vacuum is
 * off), so the store stops growing at its high-water mark instead of shrinking (README).
 */
export class RunRetention {
  readonly #o: RunRetentionOptions;
  readonly #keep: number;
  #timer: Cancel | undefined;
  #sweeping: Promise<SweepResult> | undefined;
  #stopped = true;

  constructor(opts: RunRetentionOptions) {
    this.#o = opts;
    this.#keep = opts.keepPerPipeline ?? RUNS_KEPT_PER_PIPELINE;
  }

  /** Sweeps now, then every interval. */
  start(): void {
    this.#stopped = false;
    void this.#tick();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.();
    this.#timer = undefined;
  }

  /** Resolves when the sweep in progress (if any) is done. */
  async settled(): Promise<void> {
    await this.#sweeping;
  }

  async #tick(): Promise<void> {
    this.#timer = undefined;
    try {
      const r = await this.sweep();
      if (r.runs) this.#o.log.info({ ...r }, 'run retention: old runs deleted');
    } catch (err) {
      this.#o.log.error({ err: (err as Error).message }, 'run retention failed; tried again at the next interval');
    }
    if (this.#stopped) return;
    this.#timer = this.#o.scheduler(() => void this.#tick(), this.#o.intervalMs ?? RETENTION_INTERVAL_MS);
  }

  /** One sweep (a second call while one runs joins it). */
  sweep(): Promise<SweepResult> {
    this.#sweeping ??= this.#sweep().finally(() => {
      this.#sweeping = undefined;
    });
    return this.#sweeping;
  }

  async #sweep(): Promise<SweepResult> {
    const { db } = this.#o;
    const pause = this.#o.pause ?? immediate;
    const cutoff = new Date(this.#o.clock().getTime() - this.#o.retentionMs).toISOString();
    const scan = db.prepare(
      `SELECT run_id, pipeline_id, stamp, finished_at, log_lines, rejects_kept FROM pipeline_runs
       WHERE finished_at IS NOT NULL AND finished_at < @cutoff AND (finished_at, stamp) > (@at, @stamp)
       ORDER BY finished_at, stamp LIMIT @limit`,
    );
    const keptFrom = db.prepare('SELECT stamp FROM pipeline_runs WHERE pipeline_id = ? ORDER BY stamp DESC LIMIT 1 OFFSET ?');
    const deleteLogs = db.prepare('DELETE FROM pipeline_run_logs WHERE run_id = ?');
    const deleteRejects = db.prepare('DELETE FROM pipeline_run_rejects WHERE run_id = ?');
    const deleteRun = db.prepare("DELETE FROM pipeline_runs WHERE run_id = ? AND status NOT IN ('queued','running')");
    const result: SweepResult = { runs: 0, logs: 0, rejects: 0, batches: 0 };
    let cursor = { at: '', stamp: -1 };
    for (;;) {
      // The oldest stamp still among each pipeline's last `keep` (looked up once per batch).
      const kept = new Map<string, number>();
      const doomed: string[] = [];
      let rows = 0;
      const candidates = scan.all({ cutoff, at: cursor.at, stamp: cursor.stamp, limit: SCAN_BATCH }) as Candidate[];
      for (const c of candidates) {
        cursor = { at: c.finished_at, stamp: c.stamp };
        if (!kept.has(c.pipeline_id)) {
          const row = keptFrom.get(c.pipeline_id, this.#keep - 1) as { stamp: number } | undefined;
          kept.set(c.pipeline_id, row ? row.stamp : Number.NEGATIVE_INFINITY);
        }
        if (c.stamp < (kept.get(c.pipeline_id) as number)) {
          doomed.push(c.run_id);
          rows += 1 + c.log_lines + c.rejects_kept;
        }
        if (doomed.length >= DELETE_RUNS || rows >= DELETE_ROWS) break;
      }
      if (doomed.length) {
        db.transaction(() => {
          for (const runId of doomed) {
            result.logs += deleteLogs.run(runId).changes;
            result.rejects += deleteRejects.run(runId).changes;
            result.runs += deleteRun.run(runId).changes;
          }
        })();
        result.batches++;
      }
      if (candidates.length < SCAN_BATCH && cursor.stamp === candidates.at(-1)?.stamp) break;
      if (!candidates.length) break;
      await pause();
    }
    return result;
  }
}
