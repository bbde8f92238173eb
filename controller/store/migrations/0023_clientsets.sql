-- Kind ClientSet: what each set last rendered and released, per tenant (the last applied version a
-- tenant keeps while a rollout has not reached it), its rollout state and its last rendered digests.
CREATE TABLE clientsets (
  name TEXT PRIMARY KEY,
  manifest_key TEXT NOT NULL,
  path TEXT,
  spec TEXT NOT NULL,
  present INTEGER NOT NULL DEFAULT 1,
  digest TEXT,
  wave INTEGER,
  paused INTEGER NOT NULL DEFAULT 0,
  reason TEXT,
  approved_digest TEXT,
  approved_wave INTEGER NOT NULL DEFAULT -1,
  updated_at TEXT NOT NULL
);

CREATE TABLE clientset_tenants (
  set_name TEXT NOT NULL,
  input_id TEXT NOT NULL,
  input TEXT NOT NULL,
  docs TEXT NOT NULL,
  keys TEXT NOT NULL,
  digest TEXT NOT NULL,
  -- the digest of its last render (differs from `digest` while it waits for its wave)
  rendered TEXT,
  wave INTEGER,
  -- null (its input is there), 'orphaned' (input gone, kept) or 'offboarded' (input gone, policy sync)
  gone TEXT,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (set_name, input_id)
);

CREATE TABLE clientset_history (
  set_name TEXT NOT NULL,
  digest TEXT NOT NULL,
  at TEXT NOT NULL,
  tenants INTEGER NOT NULL,
  PRIMARY KEY (set_name, digest)
);
