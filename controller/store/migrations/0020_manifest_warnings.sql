-- What a manifest file carries that its kind does not know (unknown fields, each with the nearest
-- known name), per file: shown with the file's status, kept across restarts (an unchanged file is
-- not read again). Written at each scan of the file; gone when the file is gone or invalid.
CREATE TABLE manifest_warnings (
  path TEXT PRIMARY KEY,
  warnings TEXT NOT NULL
);
