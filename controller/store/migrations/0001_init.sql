-- Reconciler bookkeeping: one row per manifest key (Kind/name).
CREATE TABLE manifests (
  key                 TEXT PRIMARY KEY,
  kind                TEXT NOT NULL,
  name                TEXT NOT NULL,
  path                TEXT,
  hash                TEXT,
  spec_hash           TEXT,
  phase               TEXT NOT NULL CHECK (phase IN ('Pending','Synced','Failed','Invalid','Pruned')),
  message             TEXT NOT NULL DEFAULT '',
  attempts            INTEGER NOT NULL DEFAULT 0,
  next_retry_at       TEXT,
  resource_ids        TEXT NOT NULL DEFAULT '{}',
  applied_revision    TEXT,
  attempted_revision  TEXT,
  actor               TEXT,
  last_transition_at  TEXT NOT NULL,
  updated_at          TEXT NOT NULL
);
CREATE INDEX manifests_path ON manifests(path);
CREATE INDEX manifests_phase ON manifests(phase);

-- Per-prefix, per-year sequences for IDs such as D2026A00001.
CREATE TABLE id_sequences (
  prefix TEXT NOT NULL,
  year   INTEGER NOT NULL,
  last   INTEGER NOT NULL,
  PRIMARY KEY (prefix, year)
) WITHOUT ROWID;

-- Monotonic counters (pipeline millisecond IDs).
CREATE TABLE counters (
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE core_models (
  model_id     TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  definition   TEXT NOT NULL DEFAULT '{}',
  manifest_key TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);

CREATE TABLE connections (
  connection_id TEXT PRIMARY KEY,
  name          TEXT NOT NULL DEFAULT '',
  vendor        TEXT NOT NULL DEFAULT 'SNOWFLAKE',
  account_url   TEXT,
  warehouse     TEXT,
  database_name TEXT,
  schema_name   TEXT,
  username      TEXT,
  password_env  TEXT,
  secret_ref    TEXT,
  -- the manifest that created it (a Connection manifest, or the Client that onboarded with it)
  manifest_key  TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);

CREATE TABLE semantic_models (
  model_id         TEXT PRIMARY KEY,
  client_id        TEXT NOT NULL,
  core_model_id    TEXT NOT NULL REFERENCES core_models(model_id),
  name             TEXT NOT NULL,
  security_enabled INTEGER NOT NULL DEFAULT 1,
  external_id_key  TEXT,
  manifest_key     TEXT,
  created_at       TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX semantic_models_client ON semantic_models(client_id);

CREATE TABLE vdms (
  vdm_id        TEXT PRIMARY KEY,
  model_id      TEXT NOT NULL REFERENCES semantic_models(model_id) ON DELETE CASCADE,
  client_id     TEXT NOT NULL,
  connection_id TEXT NOT NULL REFERENCES connections(connection_id),
  name          TEXT NOT NULL,
  position      INTEGER NOT NULL,
  published     INTEGER NOT NULL DEFAULT 0,
  config        TEXT NOT NULL DEFAULT '{}',
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX vdms_model ON vdms(model_id);

CREATE TABLE facades (
  facade_id     TEXT PRIMARY KEY,
  name          TEXT NOT NULL,
  description   TEXT NOT NULL DEFAULT '',
  client_id     TEXT,
  connection_id TEXT,
  vdm_id        TEXT,
  manifest_key  TEXT,
  position      INTEGER NOT NULL DEFAULT 0,
  definition    TEXT NOT NULL DEFAULT '{}',
  created_by    TEXT,
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX facades_client ON facades(client_id);
CREATE INDEX facades_manifest ON facades(manifest_key);

CREATE TABLE experiments (
  experiment_id TEXT PRIMARY KEY,
  facade_id     TEXT NOT NULL REFERENCES facades(facade_id) ON DELETE CASCADE,
  section       TEXT NOT NULL,
  position      INTEGER NOT NULL,
  top_section   INTEGER NOT NULL DEFAULT 0,
  category      INTEGER NOT NULL DEFAULT 0,
  charts        TEXT NOT NULL DEFAULT '[]',
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX experiments_facade ON experiments(facade_id, position);

-- The client registry (spec 2.2). FAILED rows are audit entries of failed onboardings.
CREATE TABLE clients (
  client_id          TEXT PRIMARY KEY,
  client_name        TEXT NOT NULL,
  description        TEXT NOT NULL DEFAULT '',
  connection_id      TEXT,
  model_id           TEXT,
  vdm_ids            TEXT NOT NULL DEFAULT '[]',
  facade_ids         TEXT NOT NULL DEFAULT '[]',
  experiment_ids     TEXT NOT NULL DEFAULT '[]',
  core_model_id      TEXT,
  status             TEXT NOT NULL CHECK (status IN ('ACTIVE','FAILED','DELETED')),
  onboarded_by       TEXT,
  onboarded_date     TEXT NOT NULL,
  last_modified_date TEXT NOT NULL,
  is_active          INTEGER NOT NULL DEFAULT 1,
  is_deleted         INTEGER NOT NULL DEFAULT 0,
  failed_step        TEXT,
  failure_reason     TEXT,
  manifest_key       TEXT
);
CREATE INDEX clients_listing ON clients(onboarded_date DESC, client_id);
CREATE INDEX clients_status ON clients(status, onboarded_date DESC, client_id);

CREATE TABLE pipelines (
  pipeline_id  TEXT PRIMARY KEY,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  category     TEXT,
  tags         TEXT NOT NULL DEFAULT '[]',
  source       TEXT NOT NULL DEFAULT '{}',
  destination  TEXT NOT NULL DEFAULT '{}',
  schedule     TEXT,
  status       TEXT NOT NULL DEFAULT 'draft',
  manifest_key TEXT,
  created_by   TEXT,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);
CREATE INDEX pipelines_manifest ON pipelines(manifest_key);

CREATE TABLE pipeline_steps (
  step_id     TEXT PRIMARY KEY,
  pipeline_id TEXT NOT NULL REFERENCES pipelines(pipeline_id) ON DELETE CASCADE,
  position    INTEGER NOT NULL,
  type        TEXT NOT NULL,
  name        TEXT NOT NULL,
  status      TEXT NOT NULL DEFAULT 'configured',
  config      TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX pipeline_steps_pipeline ON pipeline_steps(pipeline_id, position);
