import type { Store } from '../store/db.ts';
import type { Cancel, Scheduler } from '../clock.ts';
import { fromJson } from '../kinds/json.ts';
import { DEFAULT_SCHEDULE_MIN_INTERVAL_MS, nextRunAt } from '../kinds/pipeline/schedule.ts';
import { pipelineOwner, scheduledPipelines } from '../kinds/pipeline/store.ts';
import type { PipelineSchedule } from '../kinds/pipeline/types.ts';
import type { Logger } from '../log.ts';
import type { Clock } from '../types.ts';
import type { RunDispatcher } from './dispatcher.ts';
import { ActiveRunError } from './store.ts';
import { ClientHeldError } from '../authz/holds.ts';

/** The longest the scheduler sleeps before it looks again (the wall clock may be set meanwhile). */
export const MAX_SCHEDULE_DELAY_MS = 60_000;

export interface ScheduleRunnerOptions {
  db: Store;
  dispatcher: Pick<RunDispatcher, 'start'>;
  clock: Clock;
  scheduler: Scheduler;
  log: Logger;
  /**
   * BI_SCHEDULE_MIN_INTERVAL: a pipeline's fires are at least this far apart, whatever its
   * stored schedule says (pipelines stored before the rule); the fires in between collapse.
   */
  minIntervalMs?: number;
}

interface ScheduledRow {
  pipeline_id: string;
  schedule: string;
  created_at: string;
  handled_at: string | null;
}

/**
 * Starts a run (`trigger: schedule`) for each enabled schedule at its `nextRunAt`. Per pipeline
 * the store keeps when its fires were last handled; every fire since then that is due now is
 * handled by ONE run — so fires missed while the controller was down start one run at start,
 * not a backlog. A fire while the pipeline has an active run is skipped and logged, and creates
 * no run record.
 */
export class ScheduleRunner {
  readonly #opts: ScheduleRunnerOptions;
  #timer: Cancel | undefined;
  #ticking: Promise<void> = Promise.resolve();
  #stopped = true;
  #again = false;

  constructor(opts: ScheduleRunnerOptions) {
    this.#opts = opts;
  }

  /** Handles what is due (missed fires: one run each) and arms the timer. */
  start(): Promise<void> {
    this.#stopped = false;
    return this.refresh();
  }

  stop(): void {
    this.#stopped = true;
    this.#timer?.();
    this.#timer = undefined;
  }

  /** Looks again now (a pipeline was added, changed or removed). */
  refresh(): Promise<void> {
    if (this.#stopped) return this.#ticking;
    this.#again = true;
    this.#ticking = this.#ticking.then(async () => {
      while (this.#again && !this.#stopped) {
        this.#again = false;
        await this.#tick();
      }
    });
    return this.#ticking;
  }

  /** Resolves when the tick in progress (if any) is done. */
  settled(): Promise<void> {
    return this.#ticking;
  }

  async #tick(): Promise<void> {
    const { db, clock, log } = this.#opts;
    this.#timer?.();
    this.#timer = undefined;
    const now = clock();
    const handledAt = new Map(
      (db.prepare('SELECT pipeline_id, handled_at FROM pipeline_schedule_state').all() as { pipeline_id: string; handled_at: string }[]).map((r) => [r.pipeline_id, r.handled_at]),
    );
    // Pruned pipelines leave nothing behind.
    for (const pipelineId of handledAt.keys()) {
      if (pipelineOwner(db, pipelineId) === undefined) db.prepare('DELETE FROM pipeline_schedule_state WHERE pipeline_id = ?').run(pipelineId);
    }
    const rows: ScheduledRow[] = scheduledPipelines(db).map((p) => ({ pipeline_id: p.pipelineId, schedule: p.schedule, created_at: p.createdAt, handled_at: handledAt.get(p.pipelineId) ?? null }));
    const minInterval = this.#opts.minIntervalMs ?? DEFAULT_SCHEDULE_MIN_INTERVAL_MS;
    let earliest: number | undefined;
    for (const row of rows) {
      const schedule = fromJson<PipelineSchedule | null>(row.schedule, null);
      const created = new Date(row.created_at);
      const since = new Date(row.handled_at ?? row.created_at);
      const due = nextRunAt(schedule, since, created);
      if (!due) continue;
      let handled = row.handled_at === null ? undefined : Date.parse(row.handled_at);
      const allowed = handled === undefined ? Number.NEGATIVE_INFINITY : handled + minInterval;
      const fires = due.getTime() <= now.getTime() && now.getTime() >= allowed;
      if (fires) {
        await this.#fire(row.pipeline_id, due);
        db.prepare(
          'INSERT INTO pipeline_schedule_state (pipeline_id, handled_at) VALUES (?, ?) ON CONFLICT (pipeline_id) DO UPDATE SET handled_at = excluded.handled_at',
        ).run(row.pipeline_id, now.toISOString());
        handled = now.getTime();
      }
      // A fire due too soon after the last one waits for the minimum interval (then fires once).
      const next = fires ? nextRunAt(schedule, now, created) : due;
      if (!next) continue;
      const at = Math.max(next.getTime(), handled === undefined ? Number.NEGATIVE_INFINITY : handled + minInterval);
      if (earliest === undefined || at < earliest) earliest = at;
    }
    // Nothing upcoming: no timer; an applied or pruned Pipeline makes it look again (refresh).
    if (this.#stopped || earliest === undefined) return;
    const delay = Math.min(MAX_SCHEDULE_DELAY_MS, Math.max(0, earliest - clock().getTime()));
    this.#timer = this.#opts.scheduler(() => {
      this.#timer = undefined;
      void this.refresh();
    }, delay);
    log.debug({ delayMs: delay }, 'schedules: next look');
  }

  async #fire(pipelineId: string, due: Date): Promise<void> {
    const { log } = this.#opts;
    try {
      const run = await this.#opts.dispatcher.start(pipelineId, 'schedule', 'scheduler');
      log.info({ pipelineId, runId: run.runId, due: due.toISOString() }, 'schedule fired');
    } catch (err) {
      if (err instanceof ActiveRunError) log.info({ pipelineId, due: due.toISOString() }, 'schedule fire skipped: a run is active');
      else if (err instanceof ClientHeldError) log.info({ pipelineId, due: due.toISOString(), clientId: err.clientId }, `schedule fire skipped: the client is ${err.hold}`);
      else log.error({ pipelineId, due: due.toISOString(), err: (err as Error).message }, 'schedule fire failed');
    }
  }
}
