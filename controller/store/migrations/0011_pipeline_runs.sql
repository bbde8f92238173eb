-- Pipeline runs (DESIGN "Pipeline runs"): one row per run, its steps' progress as JSON (one
-- UPDATE per flush of the recorder, not one per step), the first 1,000 rejected rows and the
-- run's log lines (bounded) beside it. Runs outlive their pipeline (history): no foreign key.
CREATE TABLE pipeline_runs (
  run_id           TEXT PRIMARY KEY,          -- RUN-<stamp>
  stamp            INTEGER NOT NULL UNIQUE,   -- strictly increasing (counters 'run'): newest first
  pipeline_id      TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('queued','running','succeeded','failed','cancelled')),
  trigger          TEXT NOT NULL CHECK (trigger IN ('api','schedule','cli')),
  attempt          INTEGER NOT NULL DEFAULT 1,
  actor            TEXT,
  -- the process that runs it (`host:pid`): a restart fails only runs whose process is gone
  owner            TEXT,
  cancel_requested INTEGER NOT NULL DEFAULT 0,
  queued_at        TEXT NOT NULL,
  started_at       TEXT,
  finished_at      TEXT,
  duration_ms      INTEGER,
  rows_read        INTEGER NOT NULL DEFAULT 0,
  rows_written     INTEGER NOT NULL DEFAULT 0,
  rows_rejected    INTEGER NOT NULL DEFAULT 0,
  error            TEXT,
  steps            TEXT NOT NULL DEFAULT '[]',
  rejects_kept     INTEGER NOT NULL DEFAULT 0,
  log_lines        INTEGER NOT NULL DEFAULT 0,
  log_dropped      INTEGER NOT NULL DEFAULT 0
);
-- One active run per pipeline, enforced by the store: a server and a `bictl run` racing on the
-- same file cannot both start one (a queued run counts as active).
CREATE UNIQUE INDEX pipeline_runs_one_active ON pipeline_runs(pipeline_id) WHERE status IN ('queued','running');
CREATE INDEX pipeline_runs_by_pipeline ON pipeline_runs(pipeline_id, stamp DESC);
CREATE INDEX pipeline_runs_last_by_status ON pipeline_runs(pipeline_id, status, stamp DESC);

CREATE TABLE pipeline_run_rejects (
  run_id   TEXT NOT NULL,
  seq      INTEGER NOT NULL,
  step     TEXT NOT NULL,
  row      TEXT NOT NULL,
  reasons  TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

CREATE TABLE pipeline_run_logs (
  run_id   TEXT NOT NULL,
  seq      INTEGER NOT NULL,
  at       TEXT NOT NULL,
  level    TEXT NOT NULL,
  message  TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Schedules: the last time the scheduler handled each pipeline's fires. Fires after it that
-- are already due at start were missed while the controller was down: they collapse into one run.
CREATE TABLE pipeline_schedule_state (
  pipeline_id  TEXT PRIMARY KEY,
  handled_at   TEXT NOT NULL
) WITHOUT ROWID;
