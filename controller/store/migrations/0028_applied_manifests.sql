-- The manifests the reconciler applied, as applied (after validation filled in defaults): the
-- "applied" side of an object's desired-vs-applied diff, its history in directory mode and what
-- a rollback there can go back to. Written by the reconciler's Recorder in the apply's own
-- transaction; the last 10 versions per key are kept (a pruned object's too).
CREATE TABLE applied_manifests (
  key         TEXT NOT NULL,
  version     INTEGER NOT NULL,           -- 1, 2, … per key
  spec_hash   TEXT NOT NULL,
  manifest    TEXT NOT NULL,              -- JSON
  path        TEXT,
  revision    TEXT,                       -- the git revision it came from (git mode)
  actor       TEXT,
  applied_at  TEXT NOT NULL,
  PRIMARY KEY (key, version)
) WITHOUT ROWID;
