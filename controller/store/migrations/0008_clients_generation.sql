-- A counter that moves on every write to the client registry, so an in-memory copy (the
-- search corpus) knows when to reload — also after writes from another process (bictl sync).
INSERT OR IGNORE INTO counters (name, value) VALUES ('clients.generation', 0);

CREATE TRIGGER clients_generation_insert AFTER INSERT ON clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'clients.generation';
END;
CREATE TRIGGER clients_generation_delete AFTER DELETE ON clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'clients.generation';
END;
CREATE TRIGGER clients_generation_update AFTER UPDATE ON clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'clients.generation';
END;
