-- The last Test Connection of each stored connection (settings UI, connections list): when,
-- whether it connected, the one-sentence message, how long it took and who ran it. One row per
-- connection, replaced by the next test; never a credential.
CREATE TABLE connection_tests (
  connection_id TEXT PRIMARY KEY REFERENCES connections (connection_id) ON DELETE CASCADE,
  tested_at     TEXT NOT NULL,
  ok            INTEGER NOT NULL,
  message       TEXT NOT NULL,
  duration_ms   INTEGER NOT NULL,
  tested_by     TEXT
);
