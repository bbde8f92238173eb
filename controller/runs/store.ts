import type { Store } from '../store/db.ts';
import { boundMessage, ConflictError } from '../errors.ts';
import { fromJson, toJson } from '../kinds/json.ts';
import { IdAllocator } from '../store/ids.ts';
import type { ApiPipelineRun } from '../generated/schema-types.ts';
import type { Clock } from '../types.ts';
import type { EngineResult, LogLevel, RejectedRow, RunStatus, RunTrigger, StepProgress } from './types.ts';

/** A run as the API shows it: the generated `PipelineRun` of schemas/api.schema.json, with the engine's typed steps. */
export type RunView = Omit<ApiPipelineRun, 'steps'> & { steps: StepProgress[] };

export interface RejectView {
  step: string;
  row: Record<string, unknown>;
  reasons: string[];
}

export interface LogView {
  at: string;
  level: LogLevel;
  message: string;
}

export type LogLine = LogView;

/** What a recorder flush writes in one transaction. */
export interface RunProgress {
  /** Every step's latest progress (the whole list: it replaces the stored one). */
  steps?: StepProgress[];
  rejects?: RejectedRow[];
  logs?: LogLine[];
}


/** Rejected rows kept per run (docs/contract/design.md: the first 1,000). */
export const MAX_REJECTS_KEPT = 1000;

/** Rejected rows read per query by an export. */
const REJECT_PAGE = 100;

/** Which rejected rows: of one step (its name), with a reason containing a text. */
export interface RejectFilter {
  step?: string;
  reason?: string;
}

/** Which log lines: of one level, of one step. */
export interface LogFilter {
  level?: string;
  step?: string;
}

function rejectWhere(runId: string, filter: RejectFilter): { where: string; args: Record<string, unknown> } {
  const clauses = ['run_id = @runId'];
  const args: Record<string, unknown> = { runId };
  if (filter.step) {
    clauses.push('step = @step');
    args.step = filter.step;
  }
  if (filter.reason) {
    // instr, not LIKE: the text is matched as typed (% and _ are not wildcards).
    clauses.push('EXISTS (SELECT 1 FROM json_each(reasons) WHERE instr(lower(value), lower(@reason)) > 0)');
    args.reason = filter.reason;
  }
  return { where: clauses.join(' AND '), args };
}
/** Log lines kept per run; the rest are counted, and the count is logged at the end. */
export const MAX_LOG_LINES = 1000;
const MAX_LOG_MESSAGE = 2000;
const RUN_ID = /^RUN-\d+$/;

interface RunRow {
  run_id: string;
  pipeline_id: string;
  status: RunStatus;
  trigger: RunTrigger;
  attempt: number;
  actor: string | null;
  owner: string | null;
  cancel_requested: number;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  rows_read: number;
  rows_written: number;
  rows_rejected: number;
  error: string | null;
  steps: string;
  rejects_kept: number;
  log_lines: number;
  log_dropped: number;
  /** The `bictl worker` that ran it (queue mode); null for in-process runs. */
  worker?: string | null;
}

function toView(r: RunRow): RunView {
  return {
    runId: r.run_id,
    pipelineId: r.pipeline_id,
    status: r.status,
    trigger: r.trigger,
    attempt: r.attempt,
    queuedAt: r.queued_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    durationMs: r.duration_ms,
    rowsRead: r.rows_read,
    rowsWritten: r.rows_written,
    rowsRejected: r.rows_rejected,
    error: r.error,
    steps: fromJson<StepProgress[]>(r.steps, []),
    ...(r.worker ? { worker: r.worker } : {}),
  };
}

const MAX_VALUE_CHARS = 1000;

/** A rejected row as stored: long texts cut, big integers as text (1,000 rows stay small). */
function rowJson(row: Record<string, unknown>): string {
  return JSON.stringify(row, (_key, v: unknown) =>
    typeof v === 'bigint' ? v.toString() : typeof v === 'string' && v.length > MAX_VALUE_CHARS ? `${v.slice(0, MAX_VALUE_CHARS)}…` : v,
  );
}

/** How many runs of each of these pipelines are kept. */
export function runCounts(db: Store, pipelineIds: readonly string[]): Map<string, number> {
  const rows = db.statements
    .prepare('SELECT pipeline_id, COUNT(*) AS n FROM pipeline_runs WHERE pipeline_id IN (SELECT value FROM json_each(?)) GROUP BY pipeline_id')
    .all(JSON.stringify(pipelineIds)) as { pipeline_id: string; n: number }[];
  return new Map(rows.map((r) => [r.pipeline_id, r.n]));
}

/** Deletes every run of these pipelines with its logs and rejects, and their schedules' state. */
export function deleteRunsOf(db: Store, pipelineIds: readonly string[]): void {
  const ids = JSON.stringify(pipelineIds);
  const runs = 'SELECT run_id FROM pipeline_runs WHERE pipeline_id IN (SELECT value FROM json_each(?))';
  db.statements.prepare(`DELETE FROM pipeline_run_logs WHERE run_id IN (${runs})`).run(ids);
  db.statements.prepare(`DELETE FROM pipeline_run_rejects WHERE run_id IN (${runs})`).run(ids);
  db.statements.prepare('DELETE FROM pipeline_runs WHERE pipeline_id IN (SELECT value FROM json_each(?))').run(ids);
  db.statements.prepare('DELETE FROM pipeline_schedule_state WHERE pipeline_id IN (SELECT value FROM json_each(?))').run(ids);
}

/** The runs of these pipelines in these statuses, oldest first. */
export function runIdsOf(db: Store, pipelineIds: readonly string[], statuses: readonly RunStatus[]): string[] {
  if (!pipelineIds.length) return [];
  const rows = db.statements
    .prepare('SELECT run_id FROM pipeline_runs WHERE pipeline_id IN (SELECT value FROM json_each(?)) AND status IN (SELECT value FROM json_each(?)) ORDER BY queued_at, run_id')
    .all(JSON.stringify(pipelineIds), JSON.stringify(statuses)) as { run_id: string }[];
  return rows.map((r) => r.run_id);
}

/** A pipeline's newest run, for the pipeline read (`lastRun`). */
export function readLastRun(db: Store, pipelineId: string): RunView | undefined {
  const row = db.prepare('SELECT * FROM pipeline_runs WHERE pipeline_id = ? ORDER BY stamp DESC LIMIT 1').get(pipelineId) as RunRow | undefined;
  return row ? toView(row) : undefined;
}

/** Steps not yet run when a run ends without them are shown `skipped`. */
function settleSteps(steps: StepProgress[]): StepProgress[] {
  return steps.map((s) => (s.status === 'pending' || s.status === 'running' ? { ...s, status: s.status === 'running' ? 'failed' : 'skipped' } : s));
}

/** The pipeline already has a queued or running run. */
export class ActiveRunError extends ConflictError {
  constructor(pipelineId: string, active: string | undefined) {
    super(`Pipeline ${pipelineId} already has an active run${active ? ` (${active})` : ''}`);
    this.name = 'ActiveRunError';
  }
}

export interface RunStoreOptions {
  db: Store;
  clock: Clock;
}

/**
 * Run records in the SQLite store. Every write is one short transaction; the one-active-run
 * rule is the partial unique index of migration 0011, so it holds across processes.
 */
export class RunStore {
  readonly #db: Store;
  readonly #clock: Clock;
  readonly #ids: IdAllocator;

  constructor(opts: RunStoreOptions) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#ids = new IdAllocator({ db: opts.db, clock: opts.clock });
  }

  static isRunId(runId: string): boolean {
    return RUN_ID.test(runId);
  }

  #row(runId: string): RunRow | undefined {
    return this.#db.prepare('SELECT * FROM pipeline_runs WHERE run_id = ?').get(runId) as RunRow | undefined;
  }

  get(runId: string): RunView | undefined {
    const row = this.#row(runId);
    return row ? toView(row) : undefined;
  }

  /** Records a queued run; throws ActiveRunError when the pipeline has one queued or running. */
  create(opts: { pipelineId: string; trigger: RunTrigger; actor: string | null; owner: string; steps: StepProgress[] }): RunView {
    const insert = this.#db.transaction(() => {
      const active = this.active(opts.pipelineId);
      if (active) throw new ActiveRunError(opts.pipelineId, active.runId);
      const stamp = this.#ids.nextStamp('run');
      const runId = `RUN-${stamp}`;
      this.#db
        .prepare(
          `INSERT INTO pipeline_runs (run_id, stamp, pipeline_id, status, trigger, actor, owner, queued_at, steps)
           VALUES (?, ?, ?, 'queued', ?, ?, ?, ?, ?)`,
        )
        .run(runId, stamp, opts.pipelineId, opts.trigger, opts.actor, opts.owner, this.#clock().toISOString(), toJson(opts.steps));
      return runId;
    });
    let runId: string;
    try {
      runId = insert.immediate();
    } catch (err) {
      // Another process won the race between our check and our insert.
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new ActiveRunError(opts.pipelineId, this.active(opts.pipelineId)?.runId);
      throw err;
    }
    return this.get(runId) as RunView;
  }

  /** The pipeline's queued or running run. */
  active(pipelineId: string): RunView | undefined {
    const row = this.#db
      .prepare("SELECT * FROM pipeline_runs WHERE pipeline_id = ? AND status IN ('queued','running')")
      .get(pipelineId) as RunRow | undefined;
    return row ? toView(row) : undefined;
  }

  /** Newest first. */
  list(pipelineId: string, opts: { status?: RunStatus; limit: number }): RunView[] {
    const rows = opts.status
      ? this.#db.prepare('SELECT * FROM pipeline_runs WHERE pipeline_id = ? AND status = ? ORDER BY stamp DESC LIMIT ?').all(pipelineId, opts.status, opts.limit)
      : this.#db.prepare('SELECT * FROM pipeline_runs WHERE pipeline_id = ? ORDER BY stamp DESC LIMIT ?').all(pipelineId, opts.limit);
    return (rows as RunRow[]).map(toView);
  }

  last(pipelineId: string): RunView | undefined {
    return readLastRun(this.#db, pipelineId);
  }

  /** queued → running; false when the run is no longer queued (cancelled meanwhile). */
  markRunning(runId: string, owner: string): boolean {
    const at = this.#clock().toISOString();
    return (
      this.#db.prepare("UPDATE pipeline_runs SET status = 'running', started_at = ?, owner = ? WHERE run_id = ? AND status = 'queued'").run(at, owner, runId)
        .changes === 1
    );
  }

  /** A queued run becomes cancelled at once; false when it is not queued (any more). */
  cancelQueued(runId: string): boolean {
    const row = this.#row(runId);
    if (row?.status !== 'queued') return false;
    const at = this.#clock().toISOString();
    const steps = toJson(settleSteps(fromJson<StepProgress[]>(row.steps, [])));
    return (
      this.#db
        .prepare("UPDATE pipeline_runs SET status = 'cancelled', finished_at = ?, duration_ms = 0, steps = ? WHERE run_id = ? AND status = 'queued'")
        .run(at, steps, runId).changes === 1
    );
  }

  /** Asks the process running it to stop (it reads the flag on its next flush). */
  requestCancel(runId: string): boolean {
    return this.#db.prepare("UPDATE pipeline_runs SET cancel_requested = 1 WHERE run_id = ? AND status IN ('queued','running')").run(runId).changes === 1;
  }

  cancelRequested(runId: string): boolean {
    return this.#row(runId)?.cancel_requested === 1;
  }

  /**
   * Writes what a recorder collected since its last flush, in one transaction: the steps, the
   * rejects up to the first 1,000, the log lines up to the bound. Answers whether a cancel was
   * requested (by another process, or an API call served by one).
   */
  record(runId: string, progress: RunProgress): { cancelRequested: boolean } {
    return this.#db.transaction(() => {
      const row = this.#db.prepare('SELECT rejects_kept, log_lines, cancel_requested FROM pipeline_runs WHERE run_id = ?').get(runId) as
        | Pick<RunRow, 'rejects_kept' | 'log_lines' | 'cancel_requested'>
        | undefined;
      if (!row) return { cancelRequested: false };
      if (progress.steps) this.#db.prepare('UPDATE pipeline_runs SET steps = ? WHERE run_id = ?').run(toJson(progress.steps), runId);
      const rejects = (progress.rejects ?? []).slice(0, Math.max(0, MAX_REJECTS_KEPT - row.rejects_kept));
      if (rejects.length) {
        const insert = this.#db.prepare('INSERT INTO pipeline_run_rejects (run_id, seq, step, row, reasons) VALUES (?, ?, ?, ?, ?)');
        rejects.forEach((r, i) => insert.run(runId, row.rejects_kept + i, r.step, rowJson(r.row), toJson(r.reasons.map((m) => boundMessage(m, 500)))));
      }
      const logs = progress.logs ?? [];
      const kept = logs.slice(0, Math.max(0, MAX_LOG_LINES - row.log_lines));
      if (kept.length) {
        const insert = this.#db.prepare('INSERT INTO pipeline_run_logs (run_id, seq, at, level, message) VALUES (?, ?, ?, ?, ?)');
        kept.forEach((l, i) => insert.run(runId, row.log_lines + i, l.at, l.level, boundMessage(l.message, MAX_LOG_MESSAGE)));
      }
      if (rejects.length || logs.length) {
        this.#db
          .prepare('UPDATE pipeline_runs SET rejects_kept = rejects_kept + ?, log_lines = log_lines + ?, log_dropped = log_dropped + ? WHERE run_id = ?')
          .run(rejects.length, kept.length, logs.length - kept.length, runId);
      }
      return { cancelRequested: row.cancel_requested === 1 };
    })();
  }

  /** The run's end, written once. */
  finish(runId: string, outcome: EngineResult): RunView {
    const now = this.#clock();
    const row = this.#row(runId);
    const started = row?.started_at ?? row?.queued_at;
    const durationMs = started ? Math.max(0, now.getTime() - Date.parse(started)) : 0;
    this.#db
      .prepare(
        `UPDATE pipeline_runs SET status = @status, finished_at = @at, duration_ms = @durationMs, rows_read = @rowsRead,
           rows_written = @rowsWritten, rows_rejected = @rowsRejected, error = @error, steps = @steps
         WHERE run_id = @runId AND status IN ('queued','running')`,
      )
      .run({
        runId,
        status: outcome.status,
        at: now.toISOString(),
        durationMs,
        rowsRead: outcome.rowsRead,
        rowsWritten: outcome.rowsWritten,
        rowsRejected: outcome.rowsRejected,
        error: outcome.error === null ? null : boundMessage(outcome.error),
        steps: toJson(settleSteps(outcome.steps)),
      });
    return this.get(runId) as RunView;
  }

  /**
   * At start: runs left queued or running by a process that is gone become `failed` with an
   * `interrupted` error. `alive(owner)` says whether another live process still runs one.
   */
  failInterrupted(alive: (owner: string | null) => boolean): string[] {
    const rows = this.#db.prepare("SELECT * FROM pipeline_runs WHERE status IN ('queued','running')").all() as RunRow[];
    const gone = rows.filter((r) => !alive(r.owner));
    for (const r of gone) {
      this.finish(r.run_id, {
        status: 'failed',
        rowsRead: r.rows_read,
        rowsWritten: 0,
        rowsRejected: r.rows_rejected,
        error: `interrupted: the controller stopped while the run was ${r.status}`,
        steps: fromJson<StepProgress[]>(r.steps, []),
      });
    }
    return gone.map((r) => r.run_id);
  }

  /** The kept rejected rows in the order they were rejected, of one step and/or with a reason containing `reason`; `offset` skips that many (paging). */
  rejects(runId: string, limit: number, offset = 0, filter: RejectFilter = {}): RejectView[] {
    return [...this.eachReject(runId, filter, { limit, offset })];
  }

  /**
   * The kept rejected rows one by one, read a page at a time (an export streams them without
   * holding them all, and no statement stays open between pages: the store keeps serving writes).
   */
  *eachReject(runId: string, filter: RejectFilter = {}, page: { limit?: number; offset?: number } = {}): Generator<RejectView> {
    const { where, args } = rejectWhere(runId, filter);
    const statement = this.#db.prepare(`SELECT step, row, reasons FROM pipeline_run_rejects WHERE ${where} ORDER BY seq LIMIT @limit OFFSET @offset`);
    let left = page.limit ?? Number.POSITIVE_INFINITY;
    let offset = page.offset ?? 0;
    while (left > 0) {
      const rows = statement.all({ ...args, limit: Math.min(left, REJECT_PAGE), offset }) as { step: string; row: string; reasons: string }[];
      for (const r of rows) yield { step: r.step, row: fromJson<Record<string, unknown>>(r.row, {}), reasons: fromJson<string[]>(r.reasons, []) };
      if (rows.length < Math.min(left, REJECT_PAGE)) return;
      left -= rows.length;
      offset += rows.length;
    }
  }

  /** The kept log lines in order, of one level and/or one step (a step's lines start with `<step name>: `). */
  logs(runId: string, limit: number, filter: LogFilter = {}): LogView[] {
    return [...this.eachLog(runId, filter, limit)];
  }

  *eachLog(runId: string, filter: LogFilter = {}, limit = -1): Generator<LogView> {
    const clauses = ['run_id = @runId'];
    const args: Record<string, unknown> = { runId, limit };
    if (filter.level) {
      clauses.push('level = @level');
      args.level = filter.level;
    }
    if (filter.step) {
      clauses.push("substr(message, 1, length(@prefix)) = @prefix");
      args.prefix = `${filter.step}: `;
    }
    yield* this.#db.prepare(`SELECT at, level, message FROM pipeline_run_logs WHERE ${clauses.join(' AND ')} ORDER BY seq LIMIT @limit`).all(args) as LogView[];
  }
}
