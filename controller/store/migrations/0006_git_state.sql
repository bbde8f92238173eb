-- Git mode: the last revision of the branch that was fully delivered to the reconciler,
-- per repository, branch and manifests folder. A restart diffs from it.
CREATE TABLE git_state (
  url         TEXT NOT NULL,
  branch      TEXT NOT NULL,
  path        TEXT NOT NULL,
  revision    TEXT NOT NULL,
  synced_at   TEXT NOT NULL,
  PRIMARY KEY (url, branch, path)
) WITHOUT ROWID;
