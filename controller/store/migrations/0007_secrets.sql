-- Credentials typed into the settings UI, encrypted at rest (AES-256-GCM). Manifests refer to
-- them as `secretRef: secret:<secret_id>`; the plaintext never reaches a manifest or git.
CREATE TABLE secrets (
  secret_id   TEXT PRIMARY KEY,
  label       TEXT NOT NULL DEFAULT '',
  -- 12-byte nonce, ciphertext and 16-byte GCM tag, each base64
  iv          TEXT NOT NULL,
  ciphertext  TEXT NOT NULL,
  tag         TEXT NOT NULL,
  -- first 16 hex of HMAC-SHA256(key, 'bi-controller key check'): a changed BI_SECRET_KEY is
  -- reported as such instead of as a corrupt secret
  key_id      TEXT NOT NULL,
  created_by  TEXT,
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
