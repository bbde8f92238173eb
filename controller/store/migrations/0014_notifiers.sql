-- Notifier manifests as applied (one row per manifest), with the delivery state of each target
-- beside its configuration: how many messages were delivered or given up, and the last outcome.
CREATE TABLE notifiers (
  name             TEXT PRIMARY KEY,
  manifest_key     TEXT NOT NULL,
  type             TEXT NOT NULL,
  url              TEXT NOT NULL,
  secret_env       TEXT,
  events           TEXT,            -- JSON array; NULL: every event
  kinds            TEXT,            -- JSON array; NULL: every kind
  clients          TEXT,            -- JSON array; NULL: every client
  updated_at       TEXT NOT NULL,
  delivered        INTEGER NOT NULL DEFAULT 0,
  failed           INTEGER NOT NULL DEFAULT 0,
  last_event       TEXT,
  last_result      TEXT,            -- delivered | retrying | failed
  last_error       TEXT,
  last_attempt_at  TEXT
);
