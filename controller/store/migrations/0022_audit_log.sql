-- The audit log: append-only and hash-chained (DESIGN.md, "Tenant lifecycle and the audit log").
-- Each row is one entry; `hash` = sha256hex(prev_hash + canonical JSON of the entry without
-- `hash`), rebuilt from these columns by `bictl audit verify`.
CREATE TABLE audit_log (
  seq            INTEGER PRIMARY KEY,
  at             TEXT NOT NULL,
  actor_type     TEXT NOT NULL CHECK (actor_type IN ('user','key','git','controller','cli')),
  actor_id       TEXT NOT NULL,
  actor_revision TEXT,
  action         TEXT NOT NULL,
  client_id      TEXT,
  object_kind    TEXT,
  object_id      TEXT,
  before         TEXT,
  after          TEXT,
  result         TEXT NOT NULL CHECK (result IN ('ok','refused','failed')),
  request_id     TEXT,
  hash           TEXT NOT NULL,
  prev_hash      TEXT NOT NULL
);
CREATE INDEX audit_client ON audit_log(client_id, seq);
CREATE INDEX audit_at ON audit_log(at);

-- Age-based pruning (BI_AUDIT_RETENTION) opens this gate inside its own transaction only; the
-- first kept entry's seq and prevHash are kept as the checkpoint the verification starts from.
INSERT OR IGNORE INTO counters (name, value) VALUES ('audit.prune_gate', 0);
CREATE TABLE audit_checkpoint (
  id        INTEGER PRIMARY KEY CHECK (id = 1),
  seq       INTEGER NOT NULL,
  prev_hash TEXT NOT NULL,
  pruned_at TEXT NOT NULL
);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log
WHEN (SELECT value FROM counters WHERE name = 'audit.prune_gate') <> 1 BEGIN
  SELECT RAISE(ABORT, 'the audit log is append-only');
END;
