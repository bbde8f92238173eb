-- Tenancy (issue 13): every object belongs to at most one client; members see only the
-- clients granted to them; a user can be disabled. Ownership of what already exists is
-- inferred here, once, from what the store holds.

-- Connections: owned by one client, or shared (a platform warehouse any tenant may use).
ALTER TABLE connections ADD COLUMN owner_client_id TEXT;
ALTER TABLE connections ADD COLUMN shared INTEGER NOT NULL DEFAULT 0;
-- A client owns the connection its onboarding created, else the one it first claimed.
UPDATE connections SET owner_client_id = substr(manifest_key, 8) WHERE manifest_key LIKE 'Client/%';
UPDATE connections SET owner_client_id = (
  SELECT c.client_id FROM clients c WHERE c.connection_id = connections.connection_id
  ORDER BY c.status = 'FAILED', c.onboarded_date, c.client_id LIMIT 1
) WHERE owner_client_id IS NULL;
CREATE INDEX connections_owner ON connections(owner_client_id);

-- Facades (dashboards): a client's own, or a standalone one owned by the owner of its connection.
ALTER TABLE facades ADD COLUMN owner_client_id TEXT;
UPDATE facades SET owner_client_id = COALESCE(client_id,
  (SELECT owner_client_id FROM connections k WHERE k.connection_id = facades.connection_id AND k.shared = 0),
  (SELECT client_id FROM vdms v WHERE v.vdm_id = facades.vdm_id));
CREATE INDEX facades_owner ON facades(owner_client_id);

-- Experiments belong to their facade's client (stored too, so a read by experiment ID needs no join).
ALTER TABLE experiments ADD COLUMN owner_client_id TEXT;
UPDATE experiments SET owner_client_id = (SELECT owner_client_id FROM facades f WHERE f.facade_id = experiments.facade_id);

-- Pipelines: the one owner of their connections (source, destination, step overrides); NULL
-- when they use connections of different clients (admins only).
ALTER TABLE pipelines ADD COLUMN owner_client_id TEXT;
UPDATE pipelines SET owner_client_id = (
  SELECT MIN(k.owner_client_id) FROM connections k
  WHERE k.shared = 0 AND k.connection_id IN (
    SELECT json_extract(pipelines.source, '$.connectionId')
    UNION SELECT json_extract(pipelines.destination, '$.connectionId')
    UNION SELECT json_extract(s.config, '$.connectionId') FROM pipeline_steps s WHERE s.pipeline_id = pipelines.pipeline_id)
  HAVING COUNT(DISTINCT k.owner_client_id) = 1 AND COUNT(*) = COUNT(k.owner_client_id)
);
CREATE INDEX pipelines_owner ON pipelines(owner_client_id);

-- Users: disabled without being deleted; members' grants.
ALTER TABLE users ADD COLUMN disabled_at TEXT;
CREATE TABLE user_clients (
  user_id    TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  client_id  TEXT NOT NULL,
  granted_at TEXT NOT NULL,
  granted_by TEXT NOT NULL,
  PRIMARY KEY (user_id, client_id)
);

-- A counter that moves on every change to users or grants, so the cached rights of a key's
-- user are re-read at once (also after `bictl users ...` in another process).
INSERT OR IGNORE INTO counters (name, value) VALUES ('users.generation', 0);
CREATE TRIGGER users_generation_update AFTER UPDATE ON users BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'users.generation';
END;
CREATE TRIGGER users_generation_delete AFTER DELETE ON users BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'users.generation';
END;
CREATE TRIGGER user_clients_generation_insert AFTER INSERT ON user_clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'users.generation';
END;
CREATE TRIGGER user_clients_generation_delete AFTER DELETE ON user_clients BEGIN
  UPDATE counters SET value = value + 1 WHERE name = 'users.generation';
END;

-- A facade gets its owner when it is created (onboarding's dashboards carry their client; a
-- standalone one takes its connection's owner, or on a shared connection its VDM's client).
CREATE TRIGGER facades_owner AFTER INSERT ON facades WHEN NEW.owner_client_id IS NULL BEGIN
  UPDATE facades SET owner_client_id = COALESCE(NEW.client_id,
    (SELECT owner_client_id FROM connections k WHERE k.connection_id = NEW.connection_id AND k.shared = 0),
    (SELECT client_id FROM vdms v WHERE v.vdm_id = NEW.vdm_id))
  WHERE facade_id = NEW.facade_id;
END;

CREATE TRIGGER experiments_owner AFTER INSERT ON experiments BEGIN
  UPDATE experiments SET owner_client_id = (SELECT owner_client_id FROM facades f WHERE f.facade_id = NEW.facade_id)
  WHERE experiment_id = NEW.experiment_id;
END;
