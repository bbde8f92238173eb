-- Tenant lifecycle: SUSPENDED and OFFBOARDED (retained until `retain_until`) beside ACTIVE, FAILED
-- and DELETED (purged). SQLite cannot widen a CHECK: the registry is rebuilt with its indexes and
-- triggers (nothing references it by foreign key).
CREATE TABLE clients_lifecycle (
  client_id          TEXT PRIMARY KEY,
  client_name        TEXT NOT NULL,
  description        TEXT NOT NULL DEFAULT '',
  connection_id      TEXT,
  model_id           TEXT,
  vdm_ids            TEXT NOT NULL DEFAULT '[]',
  facade_ids         TEXT NOT NULL DEFAULT '[]',
  experiment_ids     TEXT NOT NULL DEFAULT '[]',
  core_model_id      TEXT,
  status             TEXT NOT NULL CHECK (status IN ('ACTIVE','FAILED','SUSPENDED','OFFBOARDED','DELETED')),
  onboarded_by       TEXT,
  onboarded_date     TEXT NOT NULL,
  last_modified_date TEXT NOT NULL,
  is_active          INTEGER NOT NULL DEFAULT 1,
  is_deleted         INTEGER NOT NULL DEFAULT 0,
  failed_step        TEXT,
  failure_reason     TEXT,
  manifest_key       TEXT,
  retain_until       TEXT
);
INSERT INTO clients_lifecycle (client_id, client_name, description, connection_id, model_id, vdm_ids, facade_ids, experiment_ids,
  core_model_id, status, onboarded_by, onboarded_date, last_modified_date, is_active, is_deleted, failed_step, failure_reason, manifest_key)
SELECT client_id, client_name, description, connection_id, model_id, vdm_ids, facade_ids, experiment_ids,
  core_model_id, status, onboarded_by, onboarded_date, last_modified_date, is_active, is_deleted, failed_step, failure_reason, manifest_key
FROM clients;
DROP TABLE clients;
ALTER TABLE clients_lifecycle RENAME TO clients;
CREATE INDEX clients_listing ON clients(onboarded_date DESC, client_id);
CREATE INDEX clients_status ON clients(status, onboarded_date DESC, client_id);
CREATE INDEX clients_manifest ON clients(manifest_key);

DROP TABLE client_status_counts;
CREATE TABLE client_status_counts (
  status TEXT PRIMARY KEY CHECK (status IN ('ACTIVE','FAILED','SUSPENDED','OFFBOARDED','DELETED')),
  n      INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO client_status_counts (status, n) VALUES ('ACTIVE', 0), ('FAILED', 0), ('SUSPENDED', 0), ('OFFBOARDED', 0), ('DELETED', 0);
UPDATE client_status_counts SET n = (SELECT COUNT(*) FROM clients WHERE clients.status = client_status_counts.status);

CREATE TRIGGER clients_count_insert AFTER INSERT ON clients BEGIN
  UPDATE client_status_counts SET n = n + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER clients_count_delete AFTER DELETE ON clients BEGIN
  UPDATE client_status_counts SET n = n - 1 WHERE status = OLD.status;
END;
CREATE TRIGGER clients_count_update AFTER UPDATE OF status ON clients WHEN OLD.status <> NEW.status BEGIN
  UPDATE client_status_counts SET n = n - 1 WHERE status = OLD.status;
  UPDATE client_status_counts SET n = n + 1 WHERE status = NEW.status;
END;
CREATE TRIGGER clients_generation_insert AFTER INSERT ON clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'clients.generation';
END;
CREATE TRIGGER clients_generation_delete AFTER DELETE ON clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'clients.generation';
END;
CREATE TRIGGER clients_generation_update AFTER UPDATE ON clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'clients.generation';
END;

-- A purge is recorded here before its first step; its steps run one transaction each and a purge
-- left pending by a crash is finished at the next start. Done purges stay as their record.
CREATE TABLE client_purges (
  client_id     TEXT PRIMARY KEY,
  requested_by  TEXT NOT NULL,
  requested_at  TEXT NOT NULL,
  forced        INTEGER NOT NULL DEFAULT 0,
  manifest_key  TEXT,
  steps_done    TEXT NOT NULL DEFAULT '[]',
  finished_at   TEXT
);
