-- A status row of an object a ClientSet generated: which set (`ClientSet/<name>`) and which input.
ALTER TABLE manifests ADD COLUMN generated_by TEXT;
ALTER TABLE manifests ADD COLUMN input_id TEXT;
CREATE INDEX manifests_generated_by ON manifests(generated_by);
