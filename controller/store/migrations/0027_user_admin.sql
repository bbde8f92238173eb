-- People administration (issue 29): a user's version (an edit names the version it read; a stale
-- one is refused with 409) and the last successful login, kept apart from `users` so a login does
-- not move `users.generation` (which would empty every process's rights cache).

ALTER TABLE users ADD COLUMN version INTEGER NOT NULL DEFAULT 1;

CREATE TABLE user_logins (
  user_id       TEXT PRIMARY KEY REFERENCES users (user_id) ON DELETE CASCADE,
  last_login_at TEXT NOT NULL
);
