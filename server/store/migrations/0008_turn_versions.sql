-- Versions of a turn: a regenerated reply or an edited message is another row at the same
-- (conversation_id, position), never a turn after it. `shown` marks the version the
-- conversation shows at that place (at most one); the others are kept, numbered by
-- (valid_at, id). Rows stored before this migration are each the one, shown version.
ALTER TABLE facts ADD COLUMN shown INTEGER NOT NULL DEFAULT 1;
