-- Where the desired state of this store comes from (a folder, or a git URL, branch and path).
-- `bictl` commands and the server refuse to act on a store whose recorded source differs from
-- the configured one (unless told to adopt the new source), so a folder is never mixed into a
-- git-mode store by a command run without BI_GIT_URL.
CREATE TABLE store_source (
  id          INTEGER PRIMARY KEY CHECK (id = 1),
  kind        TEXT NOT NULL CHECK (kind IN ('directory', 'git')),
  -- the folder's absolute path, or the git URL (a password in it removed)
  location    TEXT NOT NULL,
  branch      TEXT,
  path        TEXT,
  recorded_at TEXT NOT NULL
);

-- Where each stored secret may be sent (host, port, database, user as JSON). Secrets stored
-- before this take the target of the connection that references them (the connection's
-- columns, marked "migrated"); a secret no connection references gets none and cannot be used
-- until it is saved again with its password.
ALTER TABLE secrets ADD COLUMN target TEXT;
UPDATE secrets SET target = (
  SELECT json_object('vendor', c.vendor, 'accountUrl', c.account_url, 'database', c.database_name, 'username', c.username, 'migrated', json('true'))
  FROM connections c WHERE c.secret_ref = 'secret:' || secrets.secret_id
  ORDER BY c.updated_at DESC LIMIT 1
);
