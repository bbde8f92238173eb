-- The `bictl worker` processes the controller has heard from (their heartbeats), for
-- GET /v1/reconciler/workers, the queue's admission (free slots) and the lost-worker sweep.
-- Written by the controller only, from the workers' reports; kept an hour after a worker is lost.
CREATE TABLE run_workers (
  name          TEXT PRIMARY KEY,
  version       TEXT NOT NULL,
  concurrency   INTEGER NOT NULL,
  running       TEXT NOT NULL DEFAULT '[]',  -- JSON array of runIds, as the last heartbeat said
  heartbeat_at  TEXT NOT NULL,
  lost_at       TEXT                         -- set once the sweep has failed its runs
) WITHOUT ROWID;
