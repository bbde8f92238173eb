-- Authentication (issue 3): users, browser sessions, API keys.
-- Secrets never land here in plain text: passwords are scrypt hashes, session IDs, CSRF,
-- access and refresh tokens and API keys are SHA-256 hex digests.

CREATE TABLE users (
  user_id       TEXT PRIMARY KEY,                      -- U2026A00001
  username      TEXT NOT NULL UNIQUE COLLATE NOCASE,
  password_hash TEXT NOT NULL,                         -- scrypt$N$r$p$salt$hash
  role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

CREATE TABLE sessions (
  session_hash       TEXT PRIMARY KEY,                 -- sha256(LASID)
  user_id            TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  csrf_hash          TEXT NOT NULL,                    -- sha256(CTN)
  access_hash        TEXT NOT NULL,                    -- sha256(ATN)
  access_expires_at  TEXT NOT NULL,
  refresh_hash       TEXT NOT NULL UNIQUE,             -- sha256(RTN), rotated on refresh
  prev_refresh_hash  TEXT,                             -- the one before: its reuse revokes the session
  created_at         TEXT NOT NULL,
  expires_at         TEXT NOT NULL,
  revoked_at         TEXT
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_prev_refresh ON sessions (prev_refresh_hash);

CREATE TABLE api_keys (
  key_id       TEXT PRIMARY KEY,                       -- SK2026A00001
  user_id      TEXT NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
  key_hash     TEXT NOT NULL UNIQUE,                   -- sha256(full key)
  key_prefix   TEXT NOT NULL,                          -- first 16 characters
  label        TEXT NOT NULL,
  client_id    TEXT,                                   -- tenant scope
  scope        TEXT NOT NULL DEFAULT 'sdk:import',
  expires_at   TEXT,
  last_used_at TEXT,
  created_at   TEXT NOT NULL,
  created_by   TEXT NOT NULL,
  revoked_at   TEXT
);
CREATE INDEX api_keys_user ON api_keys (user_id);
