-- Why a manifest is not Synced, as a machine-readable reason kept apart from the human message:
-- callers branch on it and never parse the message again. Existing rows get the reason their
-- message started with (`<step>: <reason>`).
ALTER TABLE manifests ADD COLUMN reason TEXT;
UPDATE manifests SET reason = CASE
  WHEN phase = 'Invalid' THEN 'schema'
  WHEN phase = 'Failed' AND instr(message, ': ') > 0 THEN substr(message, 1, instr(message, ': ') - 1)
  WHEN phase = 'Failed' THEN 'apply'
  WHEN phase = 'Synced' AND message LIKE 'mass prune refused:%' THEN 'prune-blocked'
  ELSE NULL END;
CREATE INDEX manifests_reason ON manifests(reason) WHERE reason IS NOT NULL;
