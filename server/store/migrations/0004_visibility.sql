-- Forget covers the activity log: a note's, clip's or capture's activity row (its text and URL)
-- is hidden with the facts of the forgotten host (same batch) and restored by undo.
ALTER TABLE activity ADD COLUMN invalid_at REAL;
ALTER TABLE activity ADD COLUMN forget_batch TEXT;
CREATE INDEX activity_forget_batch ON activity(forget_batch) WHERE forget_batch IS NOT NULL;
CREATE INDEX activity_host ON activity(source_host) WHERE source_host IS NOT NULL;

-- Idempotency keys remember the hash of the body they were first used with: the same key with
-- another body is refused (422 idempotency_key_reused) instead of replaying the first answer.
ALTER TABLE idempotency ADD COLUMN body_sha256 TEXT;
