-- Queue mode (BI_QUEUE_URL, README "Runs on more than one machine"): the worker that ran a run
-- (`run.worker`, NULL for in-process runs) and when the controller admitted the queued run into the
-- PostgreSQL job queue (NULL: still waiting for a free worker slot, in tenant round-robin order).
ALTER TABLE pipeline_runs ADD COLUMN worker TEXT;
ALTER TABLE pipeline_runs ADD COLUMN enqueued_at TEXT;
CREATE INDEX pipeline_runs_active ON pipeline_runs(status) WHERE status IN ('queued','running');
