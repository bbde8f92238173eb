-- Run retention (DESIGN round 3): the sweep walks ended runs oldest first from the retention
-- cutoff down, in bounded batches with a (finished_at, stamp) cursor; queued and running runs
-- (finished_at NULL) are never in its way.
CREATE INDEX pipeline_runs_by_finished ON pipeline_runs(finished_at, stamp) WHERE finished_at IS NOT NULL;
